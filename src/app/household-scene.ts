import type { ReceivedFrame, Script, Step } from '../testing/fake-live-server/index.js'

/**
 * What the fake Live service plays: it hears the request and calls the lock; says it is waiting;
 * confirms when the phone said yes; is asked for the garage and withdraws that call; in a Home
 * Assistant house (`home: true`, the offline run) switches the kitchen light, which needs no
 * phone; starts a long answer and is talked over; hears the microphone muted. The scene ends
 * there: the offline run ends the session when the last step has played, so no timer decides it.
 * Without `home`, the lock and the garage are the hand-written HOUSEHOLD_ACTIONS.
 *
 * Each `waitFor` is on what the device must send next; its timeout is only a guard against a hang
 * (several minutes: a Zero 2 W, or an emulated one, is slow, not broken). Delays are the model's
 * pace, never a guess at how long the device needs.
 */
export function householdScene(options: { wake?: boolean; home?: boolean } = {}): Script {
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
  const calls = options.home ? HOME_ASSISTANT_CALLS : HOME_ACTION_CALLS
  const call = (id: string, c: { name: string; args?: Record<string, unknown> }) => ({
    send: { toolCall: { functionCalls: [{ id, ...c }] } },
  })
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
      call('call-1', calls.door),
      { waitFor: interim('call-1'), timeoutMs: GUARD_MS },
      { speak: 'waiting' },
      turnComplete,
      { waitFor: final('call-1'), timeoutMs: GUARD_MS },
      { speak: 'unlocked' },
      turnComplete,
      { delayMs: 400 },
      user('And open the garage.'),
      call('call-2', calls.garage),
      { waitFor: interim('call-2'), timeoutMs: GUARD_MS },
      { delayMs: 500 },
      // The model thinks better of it before anyone answers: the call is withdrawn.
      { send: { toolCallCancellation: { ids: ['call-2'] } } },
      turnComplete,
      ...(options.home
        ? [
            { delayMs: 300 },
            user('And the kitchen light on, please.'),
            call('call-3', HOME_ASSISTANT_LIGHT),
            { waitFor: final('call-3'), timeoutMs: GUARD_MS },
            turnComplete,
          ]
        : []),
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

/** The scene's calls to the hand-written home actions below. */
const HOME_ACTION_CALLS = {
  door: { name: 'unlock_front_door' },
  garage: { name: 'open_garage' },
}

/** The same calls to Home Assistant's Assist tools (2026.9 names), as a model makes them. */
export const HOME_ASSISTANT_CALLS = {
  door: { name: 'intent__HassTurnOff', args: { name: 'Front Door' } },
  garage: { name: 'intent__HassTurnOn', args: { name: 'Garage Door' } },
}

/** The kitchen light, switched on with no phone asked. */
export const HOME_ASSISTANT_LIGHT = { name: 'intent__HassTurnOn', args: { name: 'Kitchen Light' } }

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
