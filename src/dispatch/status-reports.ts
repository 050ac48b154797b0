import type { Backend, BackendHooks, DeferredCheck, DeviceArray, DeviceRead } from '../backends/backend.js';
import { StatusCode, statusWords } from './problem.js';

/*
 * Deferred reports of `guaranteeChecks: 'validate'`: a run does not read its status words back (that
 * would stall back-to-back launches); its executor copies them, on the device and in queue order,
 * into the next slot of a report array, and the slots are read in one download per array when the
 * backend settles its deferred checks (`synchronize`, `download`) or the plan's `checked()` is
 * awaited. Kernels already skip every write on a bad status, so a late report leaves outputs as
 * untouched as an early one.
 */

/** Orders runs across plans and algorithms, so the earliest violation is the one reported. */
let runOrder = 0;

/** Slots of a report array: the first holds 8 runs, and each refill doubles up to the last. */
const reportSlots = { first: 8, most: 1024 } as const;

interface ReportChunk {
  readonly array: DeviceArray<'u32'>;
  /** The run order of each used slot, in slot order. */
  readonly orders: number[];
}

/** Where one run's executor copies its status words (`SegmentedRun.statusReport`). */
export interface ReportSlot {
  readonly array: DeviceArray<'u32'>;
  /** First word of the slot. */
  readonly word: number;
  /** Gives the slot back: the run was not submitted. */
  undo(): void;
}

/** The status words of one plan's validating runs, kept on the device until read. */
export class StatusReports implements DeferredCheck {
  private filling: ReportChunk | undefined;
  private readonly full: ReportChunk[] = [];
  private spare: DeviceArray<'u32'> | undefined;
  private slots: number = reportSlots.first;
  private planDestroyed = false;
  private collecting: Promise<unknown> | undefined;

  constructor(
    private readonly backend: Backend,
    private readonly hooks: BackendHooks,
    /** The error one run's status words describe (their code is not Ok). */
    private readonly violationOf: (words: Uint32Array) => Error | undefined,
  ) {}

  /** A slot for the next run's status words; the backend settles it at its next synchronize/download. */
  take(): ReportSlot {
    if (this.filling !== undefined && this.filling.orders.length * statusWords >= this.filling.array.length) {
      this.full.push(this.filling);
      this.filling = undefined;
      // Runs outpace the checks: the next array holds more.
      this.slots = Math.min(reportSlots.most, this.slots * 2);
    }
    if (this.filling === undefined) {
      const spare = this.spare;
      this.spare = undefined;
      const array = spare !== undefined && spare.length >= this.slots * statusWords ? spare : this.backend.alloc('u32', this.slots * statusWords);
      if (spare !== undefined && array !== spare) spare.destroy();
      this.filling = { array, orders: [] };
    }
    const chunk = this.filling;
    const word = chunk.orders.length * statusWords;
    chunk.orders.push(runOrder++);
    this.hooks.defer(this);
    return {
      array: chunk.array,
      word,
      undo: () => {
        chunk.orders.pop();
      },
    };
  }

  collect(read: DeviceRead): Promise<readonly { order: number; error: Error }[]> {
    const chunks = [...this.full];
    this.full.length = 0;
    if (this.filling !== undefined && this.filling.orders.length > 0) {
      chunks.push(this.filling);
      this.filling = undefined;
    }
    // Every read is submitted now, before a later run can reuse a slot.
    const found = Promise.all(
      chunks.map(async (chunk) => {
        try {
          const words = await read(chunk.array);
          for (let slot = 0; slot < chunk.orders.length; slot++) {
            const at = slot * statusWords;
            if (words[at] === StatusCode.Ok) continue;
            const error = this.violationOf(words.subarray(at, at + statusWords));
            if (error !== undefined) return [{ order: chunk.orders[slot]!, error }];
          }
          return [];
        } finally {
          this.recycle(chunk.array);
        }
      }),
    ).then((lists) => lists.flat());
    this.collecting = found;
    return found;
  }

  /** Settles this plan's runs alone (`plan.checked()`), throwing the earliest violation not yet reported. */
  async checkNow(): Promise<void> {
    const elsewhere = this.collecting;
    const mine = this.hooks.withdraw(this) ? this.collect(this.hooks.read) : Promise.resolve([]);
    // Runs another settle is reading are reported there; wait for it all the same.
    await elsewhere?.catch(() => undefined);
    const errors = await mine;
    if (errors.length > 0) throw errors.reduce((a, b) => (b.order < a.order ? b : a)).error;
  }

  private recycle(array: DeviceArray<'u32'>): void {
    if (this.planDestroyed || this.spare !== undefined || array.destroyed) array.destroy();
    else this.spare = array;
  }

  discard(): void {
    for (const chunk of [...this.full, ...(this.filling === undefined ? [] : [this.filling])]) chunk.array.destroy();
    this.full.length = 0;
    this.filling = undefined;
    this.spare?.destroy();
    this.spare = undefined;
  }

  /** The plan was destroyed: frees what holds no unread status; the rest goes once it is read. */
  destroy(): void {
    this.planDestroyed = true;
    this.spare?.destroy();
    this.spare = undefined;
    if (this.filling !== undefined && this.filling.orders.length === 0) {
      this.filling.array.destroy();
      this.filling = undefined;
    }
  }
}
