import { type FileHandle, open, stat } from 'node:fs/promises'

/** Bytes out on an SPI bus, one transfer at a time. */
export interface SpiBus {
  write(bytes: Buffer): Promise<void>
  close(): Promise<void>
}

export interface SpiBusOptions {
  /** `/dev/spidevB.D`; a FIFO or regular file instead stands in for it (tests, a bench). */
  readonly device: string
  /** The clock. APA102s take up to ~20 MHz; the ReSpeaker's short traces are happy at 4 MHz. */
  readonly speedHz: number
}

/**
 * Opens the SPI device. A real spidev goes through `spi-device`, which sets mode 0 and the clock
 * with the spidev ioctls: a plain write() would clock at the device tree's maximum, up to 125 MHz
 * on a Pi, far beyond what an APA102 follows. A FIFO or regular file gets plain writes: that is
 * the stand-in a test reads the frames from.
 */
export async function openSpiBus(o: SpiBusOptions): Promise<SpiBus> {
  let kind: 'char' | 'file'
  try {
    const s = await stat(o.device)
    kind = s.isCharacterDevice() ? 'char' : 'file'
  } catch {
    throw new Error(
      `${o.device} does not exist: enable SPI (dtparam=spi=on in /boot/firmware/config.txt, or raspi-config → Interface Options → SPI) and reboot`,
    )
  }
  if (kind === 'file') return fileBus(await open(o.device, 'a'))
  const m = /\/spidev(\d+)\.(\d+)$/.exec(o.device)
  if (!m) {
    throw new Error(`${o.device}: expected /dev/spidev<bus>.<device>`)
  }
  let spi: typeof import('spi-device')
  try {
    const mod = (await import('spi-device')) as typeof import('spi-device') & {
      default?: typeof import('spi-device')
    }
    spi = mod.default ?? mod
  } catch {
    throw new Error(
      'the optional package spi-device is not installed (it compiles at install: apt install build-essential python3, then npm ci again)',
    )
  }
  const device = await new Promise<import('spi-device').SpiDevice>((resolve, reject) => {
    const d = spi.open(Number(m[1]), Number(m[2]), { mode: 0, maxSpeedHz: o.speedHz }, (err) =>
      err ? reject(err) : resolve(d),
    )
  })
  return {
    write: (bytes) =>
      new Promise((resolve, reject) =>
        device.transfer(
          [{ sendBuffer: bytes, byteLength: bytes.length, speedHz: o.speedHz }],
          (err) => (err ? reject(err) : resolve()),
        ),
      ),
    close: () => new Promise((resolve) => device.close(() => resolve())),
  }
}

function fileBus(fh: FileHandle): SpiBus {
  return {
    write: async (bytes) => {
      await fh.write(bytes)
    },
    close: () => fh.close(),
  }
}
