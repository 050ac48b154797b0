/**
 * The benchmark cases shared by bench/topk-cpu.ts and bench/topk-webgpu.ts: the shapes of the top-k
 * issue and two real workloads (causal sparse attention with per-row sizes, MoE routing with per-token
 * k), their deterministic data, a fast exact reference, the output check, and the CPU-side peers
 * (plain JS sort-and-slice, one-pass max).
 *
 * Every case is f32 keys, 'max', sorted, ties to the smaller index, with segment-local indices as
 * values. Segment i's keys are data[i*stride, i*stride + size_i) and its results occupy
 * [i*kMax, i*kMax + min(k_i, size_i)) of the outputs (padding: -Infinity / -1).
 *
 * Peers that only know dense rows x cols with one k (tf.topk, torch.topk) get the padded problem:
 * the full rows x stride matrix, whose invalid tail of each row holds -Infinity (the attention mask,
 * written once outside the timing), and k = the max k over the rows (kMax). Row i's first
 * min(k_i, size_i) outputs then agree with segkit's up to tie order.
 */

export type CaseKind = 'uniform' | 'attention' | 'moe-per-token-k' | 'moe-per-token-k-device' | 'ragged-device';

export interface Case {
  /** Short id, usable with --cases=. */
  readonly id: string;
  /** The label in tables. */
  readonly label: string;
  readonly kind: CaseKind;
  readonly rows: number;
  /** Row stride (= cols for dense shapes). */
  readonly stride: number;
  /** kMax: the output width per row. */
  readonly kMax: number;
  /** Valid keys per row (undefined: every row has `stride`). */
  readonly sizes?: Int32Array;
  /** k per row (undefined: every row has `kMax`). */
  readonly ks?: Int32Array;
  /** rows * stride keys; invalid tails hold -Infinity. */
  readonly data: Float32Array;
  /** Keys actually read by a per-row-size-aware top-k (sum of sizes). */
  readonly validKeys: number;
  /** How the dense peers (tfjs, torch) are called on this case. */
  readonly peerNote: string;
  /** Note on a clamped size (e.g. lavapipe's binding limit). */
  readonly clampNote?: string;
  /** The workload class, for the tables and the chart. */
  readonly workload?: string;
  /** k = 1: torch.argmax is timed too (the peer greedy decoding uses). */
  readonly argmax?: boolean;
}

/** xorshift32 uniform in [-1, 1): deterministic, no NaN. */
export function fillRandom(data: Float32Array, seed = 0x9e3779b9): Float32Array {
  let s = seed >>> 0 || 1;
  for (let i = 0; i < data.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    data[i] = ((s >>> 0) / 4294967296) * 2 - 1;
  }
  return data;
}

/** Random 32-bit patterns as f32 (NaN/Inf patterns remapped): keys spread over every exponent. */
export function fillRandomBits(data: Float32Array, seed = 0x2545f491): Float32Array {
  const u = new Uint32Array(data.buffer, data.byteOffset, data.length);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < u.length; i++) {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    let b = s >>> 0;
    if ((b & 0x7f800000) === 0x7f800000) b &= ~0x00800000; // exponent 255 -> 254
    u[i] = b;
  }
  return data;
}

function dense(id: string, rows: number, cols: number, k: number, clampNote?: string, workload?: string): Case {
  return {
    id,
    label: `${rows}x${cols} k=${k}`,
    ...(workload !== undefined ? { workload } : {}),
    ...(k === 1 ? { argmax: true } : {}),
    kind: 'uniform',
    rows,
    stride: cols,
    kMax: k,
    data: fillRandom(new Float32Array(rows * cols)),
    validKeys: rows * cols,
    peerNote: `dense ${rows}x${cols}, k=${k}`,
    ...(clampNote !== undefined ? { clampNote } : {}),
  };
}

/** Causal sparse attention: 512 rows, row i holds i*16+16 valid keys of a stride of 8192; k = 256. */
export function attentionCase(rows = 512, stride = 8192, k = 256): Case {
  const sizes = new Int32Array(rows);
  const data = fillRandom(new Float32Array(rows * stride), 0x1234567);
  let valid = 0;
  for (let i = 0; i < rows; i++) {
    sizes[i] = Math.min(stride, i * 16 + 16);
    valid += sizes[i]!;
    data.fill(-Infinity, i * stride + sizes[i]!, (i + 1) * stride);
  }
  return {
    id: 'attention',
    label: `attention ${rows}x(16..${stride}) k=${k}`,
    kind: 'attention',
    rows,
    stride,
    kMax: k,
    sizes,
    data,
    validKeys: valid,
    peerNote: `padded ${rows}x${stride} with -Inf beyond each row's size, k=${k}`,
  };
}

/** MoE router with per-token k in [1, 8]: 4096 tokens x 128 experts. */
export function moeCase(rows = 4096, experts = 128, kMax = 8): Case {
  const ks = new Int32Array(rows);
  let s = 0xc0ffee;
  for (let i = 0; i < rows; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    ks[i] = 1 + (s % kMax);
  }
  return {
    id: 'moe-k1-8',
    label: `moe ${rows}x${experts} k=1..${kMax}/token`,
    kind: 'moe-per-token-k',
    rows,
    stride: experts,
    kMax,
    ks,
    data: fillRandom(new Float32Array(rows * experts), 0xabcdef1),
    validKeys: rows * experts,
    peerNote: `dense ${rows}x${experts}, k=max over tokens=${kMax}, then each token keeps its first k_i`,
  };
}

/**
 * Ragged rows whose sizes live on the device only (a DeviceArray, e.g. the lengths a previous kernel
 * wrote): `rows` rows of a stride of `stride`, sizes uniform in [1, stride], k = 512. The dense peers
 * get the padded rows x stride matrix with -Infinity past each size.
 */
export function raggedCase(rows = 128, stride = 65536, k = 512): Case {
  const sizes = new Int32Array(rows);
  const data = fillRandom(new Float32Array(rows * stride), 0x5eed1);
  let s = 0x2468ace;
  let valid = 0;
  for (let i = 0; i < rows; i++) {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    sizes[i] = 1 + (s % stride);
    valid += sizes[i]!;
    data.fill(-Infinity, i * stride + sizes[i]!, (i + 1) * stride);
  }
  return {
    id: 'ragged-device',
    label: `ragged ${rows}x(1..${stride}) k=${k}, device sizes`,
    kind: 'ragged-device',
    workload: 'ragged rows, device-only sizes',
    rows,
    stride,
    kMax: k,
    sizes,
    data,
    validKeys: valid,
    peerNote: `padded ${rows}x${stride} with -Inf beyond each row's size, k=${k}`,
  };
}

/**
 * The cases. Default: the shapes of the first top-k issue (single row: `singleRowCols`) and the two
 * workloads; `set: 'gpu'` adds the workload classes of the speed issue (LLM vocabularies, sparse-
 * attention indexers, greedy decoding, small and DeepSeek-style routers, device-only per-token k and
 * ragged sizes).
 */
export function makeCases(opts: { singleRowCols: number; only?: string[]; extra?: string[]; clampNote?: string; set?: 'cpu' | 'gpu' }): Case[] {
  const builders: Record<string, () => Case> = {
    'moe-router': () => dense('moe-router', 4096, 256, 8, undefined, 'DeepSeek-style router, 256 experts'),
    narrow: () => dense('narrow', 16384, 64, 2),
    'wide-k2048': () => dense('wide-k2048', 64, 32768, 2048),
    'mid-k64': () => dense('mid-k64', 128, 4096, 64),
    single: () => dense('single', 1, opts.singleRowCols, 100, opts.clampNote),
    attention: () => attentionCase(),
    'moe-k1-8': () => moeCase(),
  };
  const gpuBuilders: Record<string, () => Case> = {
    'vocab-k50': () => dense('vocab-k50', 64, 151936, 50, undefined, 'top-k sampling, LLM vocabulary'),
    // FlashInfer's top_k anchor (~5x torch.topk there): 256 rows of 262144, k = 256.
    'anchor-256x262144': () => dense('anchor-256x262144', 256, 262144, 256, undefined, 'FlashInfer anchor, 256 long rows'),
    'greedy-k1': () => dense('greedy-k1', 64, 151936, 1, undefined, 'greedy decoding, batch 64'),
    'greedy-1row': () => dense('greedy-1row', 1, 128256, 1, undefined, 'greedy decoding, batch 1'),
    'indexer-64k': () => dense('indexer-64k', 64, 65536, 2048, undefined, 'sparse-attention indexer'),
    'indexer-128k': () => dense('indexer-128k', 32, 131072, 2048, undefined, 'sparse-attention indexer'),
    'router-16': () => dense('router-16', 16384, 16, 1, undefined, 'router, 16 experts'),
    'router-8': () => dense('router-8', 16384, 8, 2, undefined, 'router, 8 experts'),
    'deepseek-16k': () => dense('deepseek-16k', 16384, 256, 8, undefined, 'DeepSeek-style router, 256 experts'),
    'moe-k-device': () => ({ ...moeCase(), id: 'moe-k-device', kind: 'moe-per-token-k-device', label: 'moe 4096x128 k=1..8/token, device k', workload: 'router, per-token k on the device' }),
    'ragged-device': () => raggedCase(),
  };
  if (opts.set === 'gpu') Object.assign(builders, gpuBuilders);
  // Diagnostic cases, only when named: the single row with keys spread over all exponents (random
  // bit patterns) instead of uniform in [-1, 1), whose top radix digits fall in a few buckets.
  const extras: Record<string, () => Case> = {
    'single-bits': () => {
      const c = dense('single-bits', 1, opts.singleRowCols, 100, opts.clampNote);
      fillRandomBits(c.data as Float32Array);
      return { ...c, label: `${c.label} (random-bit keys)`, peerNote: `${c.peerNote}, keys = random f32 bit patterns` };
    },
    // The single row with keys that mislead radix-select's sampled threshold: every sampled run
    // (8 neighbours every 8 step keys, step = cols / 8192: policy.ts radixSample) holds keys above
    // all others, so fewer than k keys reach the threshold and pass 0's last workgroup reads the row
    // again for the histogram below it (webgpu/radix-histogram.ts): the slow path, timed.
    'single-misleading': () => {
      const c = dense('single-misleading', 1, opts.singleRowCols, 100, opts.clampNote);
      const data = c.data as Float32Array;
      const period = 8 * Math.max(1, Math.floor(data.length / 8192));
      for (let i = 0; i < data.length; i += period) for (let j = i; j < Math.min(i + 8, data.length); j++) data[j] = data[j]! + 100;
      return { ...c, label: `${c.label} (keys that mislead the sampled threshold)`, peerNote: `${c.peerNote}, every sampled key raised by 100` };
    },
    // Reduce over long rows split in chunks (k <= reduceMaxK): for the chunks-per-row rule (policy.ts
    // reduceWorkgroups), beside greedy-k1 and greedy-1row.
    'single-k8': () => dense('single-k8', 1, opts.singleRowCols, 8, opts.clampNote),
    'greedy-8row': () => dense('greedy-8row', 8, 151936, 1, undefined, 'greedy decoding, batch 8'),
    // Small k past 1 over long rows: where reduce's register lists give way to radix-select.
    'vocab-k8': () => dense('vocab-k8', 64, 151936, 8, undefined, 'top-k sampling, small k'),
    'vocab-k2': () => dense('vocab-k2', 64, 151936, 2, undefined, 'top-k sampling, small k'),
    'vocab-k4': () => dense('vocab-k4', 64, 151936, 4, undefined, 'top-k sampling, small k'),
    'vocab-k5': () => dense('vocab-k5', 64, 151936, 5, undefined, 'top-k sampling, small k'),
    'single-k4': () => dense('single-k4', 1, opts.singleRowCols, 4, opts.clampNote),
    'rows64k-k8': () => dense('rows64k-k8', 128, 65536, 8),
    'rows16k-k8': () => dense('rows16k-k8', 512, 16384, 8),
    'vocab1-k8': () => dense('vocab1-k8', 1, 151936, 8, undefined, 'top-k sampling, batch 1'),
    'row1m-k8': () => dense('row1m-k8', 1, 1 << 20, 8),
    'row1m-k2': () => dense('row1m-k2', 1, 1 << 20, 2),
    // The indexer's rows with smaller k: where radix-select's wider workgroups start to pay (policy.ts
    // radixWideWorkgroupMinK).
    'indexer-64k-k1024': () => dense('indexer-64k-k1024', 64, 65536, 1024, undefined, 'sparse-attention indexer, smaller k'),
    'indexer-64k-k512': () => dense('indexer-64k-k512', 64, 65536, 512, undefined, 'sparse-attention indexer, smaller k'),
    // Sorted selections past a workgroup tile (the segmented sort bench times them against torch.topk):
    // here for --variants and --tune, to set the selector's bounds between row-radix and radix-select.
    'sorted-k4096': () => dense('sorted-k4096', 64, 32768, 4096, undefined, 'sorted selection past the tile'),
    'sorted-k10000': () => dense('sorted-k10000', 16, 65536, 10000, undefined, 'sorted selection past the tile'),
    // A sparse-attention indexer while decoding: a few query rows over a long context, k = 2048
    // (DeepSeek's lightning indexer keeps 2048 keys a query).
    'indexer-decode-1': () => dense('indexer-decode-1', 1, 131072, 2048, undefined, 'sparse-attention indexer, decoding, batch 1'),
    'indexer-decode-8': () => dense('indexer-decode-8', 8, 131072, 2048, undefined, 'sparse-attention indexer, decoding, batch 8'),
    'indexer-decode-4x64k': () => dense('indexer-decode-4x64k', 4, 65536, 2048, undefined, 'sparse-attention indexer, decoding, batch 4'),
  };
  const ids = [...(opts.only ?? Object.keys(builders)), ...(opts.extra ?? [])];
  Object.assign(builders, extras, gpuBuilders);
  return ids.map((id) => {
    const b = builders[id];
    if (b === undefined) throw new Error(`unknown case ${id}; known: ${Object.keys(builders).join(', ')}`);
    return b();
  });
}

export const sizeOf = (c: Case, row: number): number => c.sizes?.[row] ?? c.stride;
export const kOf = (c: Case, row: number): number => c.ks?.[row] ?? c.kMax;

/**
 * Exact reference (max, sorted, ties to the smaller index), fast enough for 16M keys: the k-th largest
 * value from a native typed-array sort, then the keys above it and the first ties at it, sorted.
 */
export function reference(c: Case): { keys: Float32Array; indices: Int32Array } {
  const keys = new Float32Array(c.rows * c.kMax).fill(-Infinity);
  const indices = new Int32Array(c.rows * c.kMax).fill(-1);
  for (let r = 0; r < c.rows; r++) {
    const size = sizeOf(c, r);
    const take = Math.min(kOf(c, r), size);
    if (take === 0) continue;
    const row = c.data.subarray(r * c.stride, r * c.stride + size);
    const sorted = Float32Array.from(row).sort();
    const threshold = sorted[size - take]!;
    let above = 0;
    for (let i = size - 1; i >= 0 && sorted[i]! > threshold; i--) above++;
    let ties = take - above;
    const picked: number[] = [];
    for (let i = 0; i < size; i++) {
      const v = row[i]!;
      if (v > threshold) picked.push(i);
      else if (v === threshold && ties > 0) {
        picked.push(i);
        ties--;
      }
    }
    picked.sort((a, b) => row[b]! - row[a]! || a - b);
    for (let j = 0; j < take; j++) {
      keys[r * c.kMax + j] = row[picked[j]!]!;
      indices[r * c.kMax + j] = picked[j]!;
    }
  }
  return { keys, indices };
}

/** Number of output slots that differ from the reference (keys by value, indices exactly). */
export function mismatches(
  ref: { keys: Float32Array; indices: Int32Array },
  keys: ArrayLike<number>,
  indices: ArrayLike<number>,
): number {
  let bad = 0;
  for (let i = 0; i < ref.keys.length; i++) {
    if (ref.keys[i] !== keys[i]) bad++;
    else if (ref.indices[i] !== indices[i]) bad++;
  }
  return bad;
}

/**
 * A row-major output put in rank order ('max': NaN first, then key descending, then index
 * ascending) on each row's first min(k_i, size_i) slots: unsorted output compared with the sorted
 * reference.
 */
export function inRankOrder(c: Case, keys: Float32Array, indices: Int32Array): { keys: Float32Array; indices: Int32Array } {
  const out = { keys: keys.slice(), indices: indices.slice() };
  // NaN ranks above every number; -0 and +0 are equal (ties by index).
  const before = (a: number, b: number) => {
    const [ka, kb] = [keys[a]!, keys[b]!];
    if (Number.isNaN(ka) !== Number.isNaN(kb)) return Number.isNaN(ka) ? -1 : 1;
    if (!Number.isNaN(ka) && ka !== kb) return ka > kb ? -1 : 1;
    return indices[a]! - indices[b]!;
  };
  for (let r = 0; r < c.rows; r++) {
    const base = r * c.kMax;
    const take = Math.min(kOf(c, r), sizeOf(c, r));
    const slots = Array.from({ length: take }, (_, j) => base + j).sort(before);
    slots.forEach((from, j) => {
      out.keys[base + j] = keys[from]!;
      out.indices[base + j] = indices[from]!;
    });
  }
  return out;
}

/**
 * Checks a dense peer's output (rows x peerK) against the reference on each row's first
 * min(k_i, size_i) slots, by key value only (peers break ties their own way).
 */
export function peerKeyMismatches(c: Case, ref: { keys: Float32Array }, peerK: number, peerKeys: ArrayLike<number>): number {
  let bad = 0;
  for (let r = 0; r < c.rows; r++) {
    const take = Math.min(kOf(c, r), sizeOf(c, r));
    for (let j = 0; j < take; j++) if (peerKeys[r * peerK + j] !== ref.keys[r * c.kMax + j]) bad++;
  }
  return bad;
}

/** Plain JS: per row, sort the valid indices by (key desc, index asc) and keep the first k_i. */
export function jsSortAndSlice(c: Case): { keys: Float32Array; indices: Int32Array } {
  const keys = new Float32Array(c.rows * c.kMax).fill(-Infinity);
  const indices = new Int32Array(c.rows * c.kMax).fill(-1);
  const { data } = c;
  for (let r = 0; r < c.rows; r++) {
    const size = sizeOf(c, r);
    const take = Math.min(kOf(c, r), size);
    const base = r * c.stride;
    const order = Array.from({ length: size }, (_, i) => i);
    order.sort((a, b) => data[base + b]! - data[base + a]! || a - b);
    for (let j = 0; j < take; j++) {
      indices[r * c.kMax + j] = order[j]!;
      keys[r * c.kMax + j] = data[base + order[j]!]!;
    }
  }
  return { keys, indices };
}

/** The floor any top-k pays: one pass over the valid keys, keeping each row's max. */
export function onePassMax(c: Case): Float32Array {
  const out = new Float32Array(c.rows);
  const { data } = c;
  for (let r = 0; r < c.rows; r++) {
    let best = -Infinity;
    const base = r * c.stride;
    const end = base + sizeOf(c, r);
    for (let i = base; i < end; i++) if (data[i]! > best) best = data[i]!;
    out[r] = best;
  }
  return out;
}

export const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Median wall time (ms) of `runs` calls after `warmup` calls. */
export async function timeMs(fn: () => unknown | Promise<unknown>, runs: number, warmup = 2): Promise<number> {
  for (let i = 0; i < warmup; i++) await fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    await fn();
    samples.push(performance.now() - t0);
  }
  return median(samples);
}

/**
 * Median wall times (ms) of several functions measured in alternation (a, b, c, a, b, c, ...), so
 * that load from other processes on a shared machine hits each of them alike. Warm-up: `warmup`
 * rounds, and more until `warmupMs` have passed. The CPU backend's worker threads import their
 * kernels' modules when a launch first reaches them (~30 ms), and launches posted meanwhile run on
 * the calling thread alone: a warm-up of two rounds of a short call left that start in the timed
 * runs (MoE sum: 1.3 ms timed against 0.5 ms once the workers are up).
 */
export async function timeInterleaved<K extends string>(fns: Partial<Record<K, () => unknown | Promise<unknown>>>, runs: number, warmup = 2, warmupMs = 300): Promise<Record<K, number>> {
  // Only the functions given are timed (an optional peer left out has no time).
  const keys = (Object.keys(fns) as K[]).filter((k) => fns[k] !== undefined);
  const warmupStart = performance.now();
  for (let i = 0; i < warmup || performance.now() - warmupStart < warmupMs; i++) for (const k of keys) await fns[k]!();
  const samples = Object.fromEntries(keys.map((k) => [k, [] as number[]])) as unknown as Record<K, number[]>;
  for (let i = 0; i < runs; i++) {
    for (const k of keys) {
      const t0 = performance.now();
      await fns[k]!();
      samples[k].push(performance.now() - t0);
    }
  }
  return Object.fromEntries(keys.map((k) => [k, median(samples[k])])) as Record<K, number>;
}

export function parseArgs(argv: string[]): Record<string, string> {
  // Split at the first '=' only: values may hold '=' (--tune='label={...}').
  return Object.fromEntries(argv.map((a) => a.replace(/^--/, '')).map((a) => (a.includes('=') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, 'true'])));
}

/** Prints rows as an aligned text table (Markdown-compatible). */
export function printTable(rows: Record<string, unknown>[], columns?: string[]): string {
  const cols = columns ?? [...new Set(rows.flatMap((r) => Object.keys(r)))];
  const cell = (v: unknown) => (v === undefined || v === null || (typeof v === 'number' && Number.isNaN(v)) ? '' : String(v));
  const widths = cols.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (vals: string[]) => `| ${vals.map((v, i) => v.padEnd(widths[i]!)).join(' | ')} |`;
  const out = [line(cols), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map((r) => line(cols.map((c) => cell(r[c]))))].join('\n');
  console.log(out);
  return out;
}
