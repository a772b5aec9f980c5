/** A tiny element builder: the app is a handful of screens, no framework earns its weight here. */
type Attrs = Record<string, string | number | boolean | undefined | ((e: Event) => void)>
type Child = Node | string | false | null | undefined

export function h(tag: string, attrs: Attrs = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === false) continue
    if (typeof v === 'function') el.addEventListener(k.replace(/^on/, ''), v)
    else if (v === true) el.setAttribute(k, '')
    else el.setAttribute(k, String(v))
  }
  for (const c of children) if (c !== false && c !== null && c !== undefined) el.append(c)
  return el
}

export function replace(parent: Element, ...children: Child[]): void {
  parent.replaceChildren(...children.filter((c): c is Node | string => !!c))
}

export function secondsLeft(until: number, now: number): string {
  const s = Math.max(0, Math.ceil((until - now) / 1000))
  return s >= 60 ? `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}` : `${s} s`
}
