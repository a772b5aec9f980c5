/**
 * The defaults a household can change in its configuration, in one place, so that the config
 * schema (`app/config/schema.ts`) and any code with a default of its own for the same thing (the
 * voice driver's options) cannot drift apart: a session run without a configuration then behaves
 * like the appliance out of the box.
 */

/**
 * How long a phone has to answer before the gate takes silence as a no (fail closed): long enough
 * to find a phone, short enough that the room still remembers asking.
 */
export const DEFAULT_APPROVAL_TIMEOUT_MS = 60_000

/**
 * A spoken session ends after this long with nobody speaking and nothing playing: long enough for
 * a pause to think, short enough that the room is not streamed once the talk is over.
 */
export const DEFAULT_IDLE_MS = 20_000

/** How long the echo gate stays closed after playback: a small room's reverb and the device's own
 * output latency. */
export const DEFAULT_ECHO_TAIL_MS = 300

/** Wall-clock budget of one spoken session: ten minutes, about one provider connection. */
export const DEFAULT_SESSION_BUDGET_MS = 10 * 60_000

/**
 * How long a speaker that heard its wake phrase waits for the other speakers of the home to say
 * they heard it better (docs/protocol.md, "Several speakers in one home"): every answer is this
 * much later when a broker is configured, so it is short; it must also cover the others' claims
 * crossing the broker (a few ms on a LAN) with room to spare.
 */
export const DEFAULT_WAKE_WINDOW_MS = 150

/**
 * How far wake scoring may fall behind the microphone before the oldest audio is dropped, and so
 * how late a wake may still be answered (the wake stage refuses one scored later). Three seconds:
 * inside 2.5 % of a core a talking room's worst seconds lagged 3.1–3.5 s, and with 2 s two
 * ten-minute rows dropped 36 and 96 chunks where 3 s dropped none (bench/RESULTS.md, "a
 * three-second backlog"). A late wake chimes late, with the pre-roll reaching back from the phrase;
 * a dropped chunk loses any wake in it.
 */
export const DEFAULT_WAKE_BACKLOG_MS = 3000
