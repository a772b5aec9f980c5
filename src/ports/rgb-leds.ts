/** A colour, each channel 0–255. */
export interface Rgb {
  readonly r: number
  readonly g: number
  readonly b: number
}

/** A row of colour LEDs showing one colour together (the ReSpeaker's three APA102s). */
export interface RgbLeds {
  /** Lights every LED in `colour`; undefined turns them off. */
  show(colour: Rgb | undefined): void
  /** Lights each LED in its own colour, in order (undefined: that one off); a level meter. */
  showEach?(colours: readonly (Rgb | undefined)[]): void
  /** Turns them off and lets the device go. */
  close(): Promise<void>
}
