import type { SpeechAudio } from './speech.js'

/**
 * SentenceStore: spoken sentences kept on the device, by name — made once while a provider could
 * be reached, said when none can. A name is letters, digits and `-`; an unknown one reads
 * undefined, and so does one that can no longer be read (it is made again).
 */
export interface SentenceStore {
  read(name: string): Promise<SpeechAudio | undefined>
  write(name: string, audio: SpeechAudio): Promise<void>
}
