/** pocketsphinx's frames per second (`-frate`, its default). */
const FRAMES_PER_S = 100

/** One keyphrase pocketsphinx spotted (`-time yes`): where, and how sure. */
export interface Spotted {
  /** The keyphrase as written in the list. */
  readonly key: string
  readonly fromS: number
  readonly toS: number
  /** The natural log of its confidence (the ratio against its phone loop), per frame spotted. */
  readonly perFrame: number
}

/**
 * The keyphrases in pocketsphinx_continuous's output with `-time yes`: after the line of the
 * hypothesis, one line each — the keyphrase, its start and end in seconds, and its confidence.
 */
export function parseSpotted(out: string): Spotted[] {
  const spotted: Spotted[] = []
  for (const line of out.split('\n')) {
    const m = /^(\S.*?)\s+(\d+\.\d+) (\d+\.\d+) (\d+(?:\.\d+)?(?:e-?\d+)?)$/.exec(line.trim())
    if (!m) continue
    const fromS = Number(m[2])
    const toS = Number(m[3])
    const frames = Math.max(1, Math.round((toS - fromS) * FRAMES_PER_S))
    spotted.push({ key: m[1] as string, fromS, toS, perFrame: Math.log(Number(m[4])) / frames })
  }
  return spotted
}

/**
 * The phrases that win: a phrase spotted where no competitor spotted over the same stretch (any
 * overlap) scores more than `margin` above it per frame. Per frame, since every phone a keyphrase
 * adds can only lower its ratio against the phone loop: a name cut short ("hey jars") would
 * otherwise outscore the whole phrase on the phrase itself. `margin` undefined: any phrase spotted.
 */
export function winners(
  spotted: readonly Spotted[],
  phraseOf: ReadonlyMap<string, string>,
  margin: number | undefined,
): string[] {
  const heard = new Set<string>()
  for (const s of spotted) {
    const phrase = phraseOf.get(s.key)
    if (phrase === undefined) continue
    const beaten =
      margin !== undefined &&
      spotted.some(
        (c) =>
          !phraseOf.has(c.key) &&
          c.fromS < s.toS &&
          c.toS > s.fromS &&
          c.perFrame > s.perFrame + margin,
      )
    if (!beaten) heard.add(phrase)
  }
  return [...heard]
}
