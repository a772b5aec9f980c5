import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import type { Plugin } from 'vite'

/**
 * `https-setup.html`: the steps to HTTPS for a household (docs/phone-app.md, "HTTPS with a
 * household CA"), written at build time from that very section, so the app's plain-HTTP hint links
 * to the words the docs hold rather than a copy that drifts. The Markdown there is plain (headings,
 * paragraphs, lists, code, bold): this renders just that, every character escaped first.
 */
const DOC = fileURLToPath(new URL('../docs/phone-app.md', import.meta.url))
const SECTION = '## HTTPS with a household CA'

export function httpsSteps(): Plugin {
  return {
    name: 'nocturn-https-steps',
    apply: 'build',
    generateBundle() {
      this.emitFile({ type: 'asset', fileName: 'https-setup.html', source: page(section()) })
    },
  }
}

function section(): string {
  const md = readFileSync(DOC, 'utf8')
  const start = md.indexOf(SECTION)
  if (start < 0) throw new Error(`docs/phone-app.md has no "${SECTION}" section`)
  const rest = md.slice(start + SECTION.length)
  const end = rest.search(/\n## /)
  return end < 0 ? rest : rest.slice(0, end)
}

const escapeHtml = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;')

function inline(s: string): string {
  return escapeHtml(s)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/\*([^*\s][^*]*)\*/g, '<em>$1</em>')
}

function render(md: string): string {
  const out: string[] = []
  const lines = md.split('\n')
  let list: 'ol' | 'ul' | undefined
  let para: string[] = []
  const flush = () => {
    if (para.length > 0) out.push(`<p>${inline(para.join(' '))}</p>`)
    para = []
  }
  const close = () => {
    if (list) out.push(`</li></${list}>`)
    list = undefined
  }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? ''
    if (line.startsWith('```')) {
      flush()
      close()
      const code: string[] = []
      while (++i < lines.length && !(lines[i] ?? '').startsWith('```')) code.push(lines[i] ?? '')
      out.push(`<pre><code>${escapeHtml(code.join('\n'))}</code></pre>`)
      continue
    }
    const item = /^(\d+\.|-) (.*)$/.exec(line)
    if (item) {
      flush()
      const kind = item[1] === '-' ? 'ul' : 'ol'
      if (list !== kind) {
        close()
        out.push(`<${kind}><li>`)
        list = kind
      } else out.push('</li><li>')
      out.push(inline(item[2] ?? ''))
      continue
    }
    if (line.trim() === '') {
      flush()
      continue
    }
    if (list && /^\s+/.test(line)) {
      out.push(` ${inline(line.trim())}`)
      continue
    }
    close()
    para.push(line.trim())
  }
  flush()
  close()
  return out.join('\n')
}

function page(md: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8" />
<meta name="viewport" content="width=device-width, initial-scale=1" />
<meta name="color-scheme" content="light dark" />
<title>Nocturn: HTTPS for lock-screen approvals</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:0 auto;padding:1rem}pre{overflow-x:auto;padding:.5rem;border:1px solid #8886}code{font-size:.9em}</style>
</head>
<body>
<h1>HTTPS for lock-screen approvals</h1>
<p>The household CA certificate, to install on this phone: <a href="household-ca.crt" download>household-ca.crt</a> (there once the speaker has one: <code>nocturn tls</code>). Then <a href="./">back to the app</a>.</p>
${render(md)}
</body>
</html>
`
}
