/**
 * Temporary-storage layout: named slots packed into one caller-owned `'u8'` allocation, as CUB's
 * `temporary_storage::layout`. Slots whose lifetimes never overlap can share bytes through an
 * alias group, which is as large as its largest member.
 */

/** WebGPU's `minStorageBufferOffsetAlignment` default; every slot starts on such a boundary. */
export const slotAlignment = 256;

/** One placed slot. */
export interface TempSlot {
  readonly name: string;
  /** Byte offset within the temporary storage. */
  readonly offset: number;
  readonly bytes: number;
  /** The alias group this slot shares bytes in, if any. */
  readonly aliasOf: string | undefined;
  /**
   * Zeroed by the executor at the start of every run, before the first launch (on WebGPU a
   * `clearBuffer` in the run's command encoder): counters and published flags that one launch's
   * workgroups meet in. The caller's temporary storage holds anything between runs (other plans may
   * share it), so a kernel may not rely on what a previous run left.
   */
  readonly zeroed: boolean;
}

/** A finished layout. */
export interface TempStorageLayout {
  readonly slots: readonly TempSlot[];
  /** Total bytes to allocate; 0 when no slot is needed. */
  readonly totalBytes: number;
  /** The slot of that name; throws when absent. */
  slot(name: string): TempSlot;
  /** True when a slot of that name exists. */
  has(name: string): boolean;
}

const alignUp = (bytes: number, alignment: number) => Math.ceil(bytes / alignment) * alignment;

/** Builds a {@link TempStorageLayout}; zero-byte slots are left out. */
export class TempStorageLayoutBuilder {
  private readonly entries: { name: string; bytes: number; zeroed?: boolean; members?: { name: string; bytes: number }[] }[] = [];

  /** Adds a slot of `bytes` bytes; `zeroed`: cleared at the start of every run (see {@link TempSlot.zeroed}). */
  add(name: string, bytes: number, options: { readonly zeroed?: boolean } = {}): this {
    if (bytes > 0) this.entries.push({ name, bytes, zeroed: options.zeroed === true });
    return this;
  }

  /** Adds an alias group: its members are never live at the same time and share its bytes. */
  alias(group: string, members: { name: string; bytes: number }[]): this {
    const live = members.filter((m) => m.bytes > 0);
    if (live.length > 0) this.entries.push({ name: group, bytes: Math.max(...live.map((m) => m.bytes)), members: live });
    return this;
  }

  build(): TempStorageLayout {
    const slots: TempSlot[] = [];
    let offset = 0;
    for (const entry of this.entries) {
      if (entry.members === undefined) slots.push({ name: entry.name, offset, bytes: entry.bytes, aliasOf: undefined, zeroed: entry.zeroed === true });
      else for (const member of entry.members) slots.push({ name: member.name, offset, bytes: member.bytes, aliasOf: entry.name, zeroed: false });
      offset += alignUp(entry.bytes, slotAlignment);
    }
    const byName = new Map(slots.map((s) => [s.name, s]));
    return {
      slots,
      totalBytes: offset,
      slot(name) {
        const slot = byName.get(name);
        if (slot === undefined) throw new Error(`internal: no temporary-storage slot '${name}'`);
        return slot;
      },
      has: (name) => byName.has(name),
    };
  }
}

/** One line per slot, for `explain()`. */
export function describeLayout(layout: TempStorageLayout): string[] {
  if (layout.totalBytes === 0) return ['none (0 bytes)'];
  return [
    ...layout.slots.map(
      (s) => `${s.name}: ${s.bytes} bytes at offset ${s.offset}${s.aliasOf === undefined ? '' : ` (aliases ${s.aliasOf})`}${s.zeroed ? ' (zeroed at the start of every run)' : ''}`,
    ),
    `total: ${layout.totalBytes} bytes`,
  ];
}
