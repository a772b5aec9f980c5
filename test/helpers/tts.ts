import { execFileSync } from 'node:child_process'

/**
 * Household prose with no wake phrase in it, near-misses included ("hey, Jarvis's brother",
 * "Travis", "a jar of ..."): what a kitchen says all day. TTS speech is not a person in a room;
 * it tests that nothing but the wake phrase opens a session, not how well a model hears people.
 */
const HOUSEHOLD_PROSE: readonly string[] = [
  'The kettle has boiled, and the dishwasher needs emptying before dinner.',
  'Did anyone see where I left the car keys this morning?',
  'Hey, could you pass me that jar of jam from the top shelf?',
  'Travis called to say the match starts at seven, not half past.',
  'We are out of milk again, so put it on the shopping list.',
  'Harvey said the heating was making that noise again last night.',
  'Hi there, are you staying for lunch or heading straight off?',
  'The cat knocked the plant off the windowsill, there is soil everywhere.',
  'Hey, Jarred, turn the music down a little, the baby is asleep.',
  'I think the bins go out on Thursday this week because of the holiday.',
  'Remember to water the tomatoes, they looked very dry yesterday.',
  'My phone is almost flat, where is the charger for the kitchen?',
]

const TTS_VOICES: readonly string[] = ['en-us', 'en-gb+f3', 'en-sc', 'en-us+m3']

/**
 * `text` read by espeak-ng in `voice`, as S16LE mono at `rateHz` (sox resamples it); `speed`
 * (words a minute) and `pitch` (0–99) vary one voice as one person varies from day to day.
 * `sox -R`: sox dithers when it resamples, from a new seed each run unless told otherwise, so the
 * same clip differed in its low bits from run to run and a verifier's count with it.
 */
export function speakPcm(
  text: string,
  voice: string,
  rateHz = 16_000,
  how: { speed?: number; pitch?: number } = {},
): Buffer {
  return execFileSync(
    'bash',
    [
      '-c',
      'espeak-ng -v "$1" -s "$4" -p "$5" --stdout "$2" | sox -R -t wav - -r "$3" -c 1 -b 16 -e signed-integer -t raw -',
      'tts',
      voice,
      text,
      String(rateHz),
      String(how.speed ?? 165),
      String(how.pitch ?? 50),
    ],
    { maxBuffer: 64 * 1024 * 1024 },
  )
}

/**
 * `minutes` of household prose in every voice, each sentence followed by a pause, cycled until
 * long enough: one continuous stream of speech with no wake phrase.
 */
export function householdSpeech(minutes: number): Buffer {
  const pause = Buffer.alloc(16_000) // 0.5 s
  const clips: Buffer[] = []
  for (const voice of TTS_VOICES) {
    for (const line of HOUSEHOLD_PROSE) clips.push(speakPcm(line, voice), pause)
  }
  const one = Buffer.concat(clips)
  const want = minutes * 60 * 32_000
  const out = Buffer.alloc(want)
  for (let o = 0; o < want; o += one.length) one.copy(out, o, 0, Math.min(one.length, want - o))
  return out
}
