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
export async function openSpiBus(options: SpiBusOptions): Promise<SpiBus> {
  let kind: 'char' | 'file'
  try {
    const s = await stat(options.device)
    kind = s.isCharacterDevice() ? 'char' : 'file'
  } catch {
    throw new Error(
      `${options.device} does not exist: enable SPI (dtparam=spi=on in /boot/firmware/config.txt, or raspi-config → Interface Options → SPI) and reboot`,
    )
  }
  if (kind === 'file') return fileBus(await open(options.device, 'a'))
  const m = /\/spidev(\d+)\.(\d+)$/.exec(options.device)
  if (!m) {
    throw new Error(`${options.device}: expected /dev/spidev<bus>.<device>`)
  }
  const spi = await loadSpiDevice()
  const device = await new Promise<SpiDevice>((resolve, reject) => {
    const d = spi.open(
      Number(m[1]),
      Number(m[2]),
      { mode: 0, maxSpeedHz: options.speedHz },
      (err) => (err ? reject(err) : resolve(d)),
    )
  })
  return {
    write: (bytes) =>
      new Promise((resolve, reject) =>
        device.transfer(
          [{ sendBuffer: bytes, byteLength: bytes.length, speedHz: options.speedHz }],
          (err) => (err ? reject(err) : resolve()),
        ),
      ),
    close: () => new Promise((resolve) => device.close(() => resolve())),
  }
}

/** The part of `spi-device` used here, typed locally so the build does not need the package. */
interface SpiDevice {
  transfer(
    messages: { sendBuffer: Buffer; byteLength: number; speedHz: number }[],
    done: (err: Error | null) => void,
  ): void
  close(done: (err: Error | null) => void): void
}

interface SpiDeviceModule {
  open(
    bus: number,
    device: number,
    options: { mode: number; maxSpeedHz: number },
    done: (err: Error | null) => void,
  ): SpiDevice
}

/**
 * `spi-device` is optional and compiles at install: a Pi without a compiler has no copy, and the
 * build must still work there. The name is held in a variable so the compiler does not look for it.
 */
const SPI_PACKAGE = 'spi-device'

/** Whether the optional package loads here (doctor asks). */
export async function spiDeviceLoads(): Promise<boolean> {
  try {
    await loadSpiDevice()
    return true
  } catch {
    return false
  }
}

async function loadSpiDevice(): Promise<SpiDeviceModule> {
  try {
    const mod = (await import(SPI_PACKAGE)) as SpiDeviceModule & { default?: SpiDeviceModule }
    return mod.default ?? mod
  } catch {
    throw new Error(
      'the optional package spi-device is not installed (it compiles at install: apt install build-essential python3, then npm ci again)',
    )
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
