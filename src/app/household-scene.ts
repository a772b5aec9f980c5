import type { ReceivedFrame, Script, Step } from '../testing/fake-live-server/index.js'

/**
 * What the fake Live service plays: it hears the request and calls the lock; says it is waiting;
 * confirms when the phone said yes; is asked for the garage and withdraws that call; starts a long
 * answer and is talked over; hears the microphone muted. The scene ends there: the offline run
 * ends the session when the last step has played, so no timer decides it.
 *
 * Each `waitFor` is on what the device must send next; its timeout is only a guard against a hang
 * (several minutes: a Zero 2 W, or an emulated one, is slow, not broken). Delays are the model's
 * pace, never a guess at how long the device needs.
 */
export function householdScene(options: { wake?: boolean } = {}): Script {
  const streamEnd = (f: ReceivedFrame) =>
    (f.frame.realtimeInput as { audioStreamEnd?: boolean } | undefined)?.audioStreamEnd === true
  const final = (id: string) => (f: ReceivedFrame) =>
    f.key === 'toolResponse' &&
    JSON.stringify(f.frame).includes(`"id":"${id}"`) &&
    !JSON.stringify(f.frame).includes('"willContinue":true')
  const interim = (id: string) => (f: ReceivedFrame) =>
    f.key === 'toolResponse' && JSON.stringify(f.frame).includes(`"id":"${id}"`)
  const user = (text: string) => ({ send: { serverContent: { inputTranscription: { text } } } })
  const turnComplete = { send: { serverContent: { turnComplete: true } } }
  const wake = options.wake === true
  return {
    steps: [
      ...(wake
        ? // The service transcribes what it heard: the wake phrase (the second opinion) and all.
          [
            {
              transcribe: 'Hey Jarvis, please unlock the front door for the plumber.',
              afterAudioMs: 1000,
              timeoutMs: GUARD_MS,
            },
          ]
        : [
            { waitFor: 'realtimeInput', timeoutMs: GUARD_MS },
            { delayMs: 1200 },
            user('Please unlock the front door for the plumber.'),
          ]),
      { send: { toolCall: { functionCalls: [{ id: 'call-1', name: 'unlock_front_door' }] } } },
      { waitFor: interim('call-1'), timeoutMs: GUARD_MS },
      { speak: 'waiting' },
      turnComplete,
      { waitFor: final('call-1'), timeoutMs: GUARD_MS },
      { speak: 'unlocked' },
      turnComplete,
      { delayMs: 400 },
      user('And open the garage.'),
      { send: { toolCall: { functionCalls: [{ id: 'call-2', name: 'open_garage' }] } } },
      { waitFor: interim('call-2'), timeoutMs: GUARD_MS },
      { delayMs: 500 },
      // The model thinks better of it before anyone answers: the call is withdrawn.
      { send: { toolCallCancellation: { ids: ['call-2'] } } },
      turnComplete,
      { delayMs: 300 },
      user('What time is it?'),
      ...(wake ? wakeBargeIn(turnComplete) : spokenBargeIn(user, turnComplete)),
      // Someone presses mute: the device tells the model the microphone stream ended.
      { waitFor: streamEnd, timeoutMs: GUARD_MS },
    ],
  }
}

/** A long answer arrives much faster than it plays; the person talks over it; the model stops. */
function spokenBargeIn(user: (text: string) => Step, turnComplete: Step): Step[] {
  return [
    { speak: 'checking' },
    { speak: 'time' },
    { speak: 'hello' },
    { delayMs: 900 },
    user('Stop, thanks.'),
    { send: { serverContent: { interrupted: true } } },
    turnComplete,
  ]
}

/**
 * The long answer is timed by the audio the device sent (the microphone file's own clock): it
 * starts about 3 s before "Hey Jarvis, stop" in fixtures/offline/wake-scene.wav (at 20 s; the
 * session opened at about 7 s with 2 s of pre-roll) and plays past it. The approvals before it
 * end about 6 s of heard audio earlier on this machine: that is the margin for a slower one. No
 * `interrupted` comes from the model side: a drop can only be the device's own barge-in by the
 * wake phrase.
 */
function wakeBargeIn(turnComplete: Step): Step[] {
  const answer: Step[] = ['checking', 'time', 'hello', 'time', 'hello', 'checking'].map((p) => ({
    speak: p,
  }))
  return [
    { untilHeardMs: 12_000, timeoutMs: GUARD_MS },
    ...answer,
    { transcribe: 'Hey Jarvis, stop, thanks.', afterAudioMs: 16_000, timeoutMs: GUARD_MS },
    turnComplete,
  ]
}

/** How long the model side waits for the device before it calls the scene broken. */
const GUARD_MS = 300_000

/** The household's home actions the scene uses: both critical, so each needs a phone's yes. */
export const HOUSEHOLD_ACTIONS = [
  {
    name: 'unlock_front_door',
    description: 'Unlocks the front door.',
    says: 'unlock the front door',
    topic: 'home/front-door/set',
    payload: { state: 'UNLOCK' },
    critical: true,
  },
  {
    name: 'open_garage',
    description: 'Opens the garage door.',
    says: 'open the garage door',
    topic: 'home/garage/set',
    payload: { state: 'OPEN' },
    critical: true,
  },
] as const
