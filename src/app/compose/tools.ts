import type { ApprovalDesk } from '../../approvals/desk.js'
import { approvalRecorder } from '../../conversations/approval-recorder.js'
import { NocturnError } from '../../core/errors.js'
import { Gate } from '../../core/gate.js'
import { Grants } from '../../core/grants.js'
import type { PolicyTable } from '../../core/policy.js'
import { ToolSet } from '../../core/tool-set.js'
import type { Tool } from '../../core/types.js'
import type { DeviceState } from '../../device/device-state.js'
import type { ApprovalHistory } from '../../ports/approval-history.js'
import type { AudioOut } from '../../ports/audio.js'
import type { GrantStore } from '../../ports/grant-store.js'
import type { Publisher } from '../../ports/publisher.js'
import type { TimerStore } from '../../ports/timer-store.js'
import { currentTimeTool } from '../../tools/current-time.js'
import { homeActionTool } from '../../tools/home-actions.js'
import { TimerService } from '../../tools/timer-service.js'
import { timerTools } from '../../tools/timers.js'
import { volumeTool } from '../../tools/volume.js'
import { loadToolModules } from '../tool-modules.js'
import type { Composition } from './composition.js'

/** The gate every tool call passes: the household's policies, its grants, and who approves. */
export function composeGate(
  { config: c, clock }: Composition,
  policies: PolicyTable,
  desk: ApprovalDesk,
  grants: GrantStore,
  history: ApprovalHistory,
): Gate {
  // Every ending is kept for the phone's History, whichever wire asked, and every call a grant allowed.
  desk.listen(approvalRecorder(history))
  return new Gate({
    policies,
    approver: desk,
    grants: new Grants(grants),
    clock,
    approvalTimeoutMs: c.session.approvalTimeoutSeconds * 1000,
    // What a remembered yes allowed reaches the History through the desk, as every ending does.
    onCovered: (call) => desk.covered(call),
  })
}

interface ToolDeps {
  /** Where timers are kept across restarts. */
  readonly store: TimerStore
  /** Where a timer rings (the gain stage's alert path, with its floor). */
  readonly speaker: Pick<AudioOut, 'sampleRateHz' | 'write'>
  /** The device's state: the timers ring into it, the volume tool sets it. */
  readonly device: DeviceState
  /** The broker, for home actions and tool modules; none without one. */
  readonly publisher?: Publisher | undefined
}

/**
 * Every tool the model may call, in one ToolSet: the built-ins (the time, timers, the volume), the household's
 * home actions (published on the broker), and its own tool modules (`tools.modules`).
 */
export async function composeTools(
  { config: c, clock, log, closers }: Composition,
  { store, speaker, device, publisher }: ToolDeps,
): Promise<{ tools: ToolSet; timers: TimerService }> {
  const timeZone = c.persona.timeZone
  const timers = new TimerService({
    store,
    clock,
    sink: speaker,
    logger: log.child({ component: 'timers' }),
    device,
  })
  closers.add(() => timers.close())
  const tools: Tool[] = [
    currentTimeTool(clock, timeZone),
    ...timerTools(timers, clock, timeZone),
    volumeTool(device),
  ]
  if (c.homeActions.length > 0 && !publisher) {
    throw new NocturnError(
      'NOC_ERR_BAD_REQUEST',
      'homeActions need the broker: configure "mqtt" or remove them',
    )
  }
  for (const a of c.homeActions) tools.push(homeActionTool(a, publisher as Publisher) as Tool)
  tools.push(
    ...(await loadToolModules(c.tools.modules, {
      clock,
      logger: log.child({ component: 'tool-module' }),
      ...(publisher && { publisher }),
    })),
  )
  return { tools: new ToolSet(tools), timers }
}

/** Timers kept from before the restart ring now (late) or are reported missed. */
export function restoreTimers({ log }: Composition, timers: TimerService): void {
  const { rungLate, missed } = timers.start()
  if (rungLate.length + missed.length > 0) {
    log.info({ rungLate: rungLate.length, missed: missed.length }, 'timers restored')
  }
}
