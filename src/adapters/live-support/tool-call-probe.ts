/** The test tool a probe session declares; the model is asked to call it and never gets its output. */
export const PROBE_TOOL = 'nocturn_probe_wait'

/** The probe session's instruction to the model, the same for every provider. */
export const PROBE_INSTRUCTION =
  'This is a short automatic test. When asked, call the tool; while it runs, keep talking.'

export interface ProbeResult {
  /** `asynchronous`: the model spoke while the call had no output; `sequential`: it waited. */
  readonly verdict: 'asynchronous' | 'sequential' | 'no call'
  /** How long the call was held without its output. */
  readonly heldMs: number
}

/**
 * What a provider's probe session reports, as it happens: `called`, the model called the test
 * tool; `idle`, its response is over and it will take the next request; `spoke`, it said
 * something (text, audio or its transcript).
 */
type ProbeSignal = 'called' | 'idle' | 'spoke'

/** One probe session as a provider's adapter opened it, set up with the test tool. */
export interface ProbeSession {
  /** Asks the model, as a user's typed turn, for a response. */
  say(text: string): void
  close(): Promise<void> | void
}

/** What the adapter hands the probe as it opens a session. */
export interface ProbeSink {
  signal(s: ProbeSignal): void
  /** The session failed (a refused key, a closed socket): the probe ends with this error. */
  fail(err: Error): void
}

/**
 * `nocturn doctor --probe`, the part every provider shares: in a session the adapter opened with
 * the test tool, the model is asked to call it; the call's output is held back for `holdMs`, and
 * meanwhile the model is asked to say something. A model that answers while the call has no output
 * calls asynchronously; one that says nothing until the output arrives is sequential, and
 * approvals on it would be dead air. Only the opening and the wire are the adapter's.
 */
export async function probeToolCalls(
  open: (sink: ProbeSink) => Promise<ProbeSession>,
  o: { holdMs?: number | undefined; timeoutMs?: number | undefined } = {},
): Promise<ProbeResult> {
  const holdMs = o.holdMs ?? 4000
  const timeoutMs = o.timeoutMs ?? 15_000
  const seen: ProbeSignal[] = []
  let failure: Error | undefined
  let wake: () => void = () => {}
  const sink: ProbeSink = {
    signal(s) {
      seen.push(s)
      wake()
    },
    fail(err) {
      failure ??= err
      wake()
    },
  }
  /** Resolves true once `s` is seen at or after index `from`, false at the deadline. */
  const next = (s: ProbeSignal, from: number, ms: number) =>
    new Promise<boolean>((resolve, reject) => {
      const t = setTimeout(() => resolve(false), ms)
      wake = () => {
        if (failure) {
          clearTimeout(t)
          reject(failure)
        } else if (seen.indexOf(s, from) >= 0) {
          clearTimeout(t)
          resolve(true)
        }
      }
      wake()
    })
  const session = await open(sink)
  try {
    session.say(`Please call ${PROBE_TOOL} now.`)
    if (!(await next('called', 0, timeoutMs))) return { verdict: 'no call', heldMs: 0 }
    await next('idle', seen.indexOf('called'), timeoutMs)
    // The call has no output: does the model still answer?
    const mark = seen.length
    session.say('While that runs, say one short sentence.')
    const t0 = Date.now()
    const spoke = await next('spoke', mark, holdMs)
    return { verdict: spoke ? 'asynchronous' : 'sequential', heldMs: Date.now() - t0 }
  } finally {
    await session.close()
  }
}
