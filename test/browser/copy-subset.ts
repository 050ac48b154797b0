/**
 * DeviceBatchedCopy's browser subset: every variant forced once on f32 words (NaN payloads, -0,
 * infinities kept), i32 with device-only sizes, offsets and numBuffers, and overlapping device-only
 * destination ranges under 'validate'. The destination comes back with the reference's
 * (`referenceBatchedCopy`, through the case builders).
 */
import { type Backend, type BatchedCopyVariant, type DeviceArray, DeviceBatchedCopy, batchedCopyVariants, env, p, webgpuBackend } from '../../dist/index.js';
import { bits, runWithOwnTemp } from '../conformance/common.js';
import { type CopyCase, destinationBefore, expectedDestination, layoutCase, sourceWords } from '../conformance/copy-cases.js';
import { type SubsetCase, type SubsetOutcome, compared, onBackend, violationOf } from './subset.js';

type Dtype = 'f32' | 'i32';

/** Uploads a case's source and destination and its per-buffer parameters, host or device. */
function upload(backend: Backend, c: CopyCase, dtype: Dtype, device: boolean) {
  const owned: DeviceArray[] = [];
  const up = (words: Uint32Array, as: Dtype | 'u32') => {
    const array = backend.upload(as === 'f32' ? new Float32Array(words.buffer.slice(0)) : as === 'i32' ? new Int32Array(words.buffer.slice(0)) : words.slice());
    owned.push(array);
    return array;
  };
  const source = up(sourceWords(c.sourceLength, c.sizes.length + 1), dtype);
  const destination = up(destinationBefore(c), dtype);
  const perBuffer = (values: number[]) => (device ? p.perSegment(up(Uint32Array.from(values), 'u32') as DeviceArray<'u32'>) : p.perSegment(values));
  const n = c.sizes.length;
  const args = {
    source,
    destination,
    sizes: perBuffer(c.sizes),
    sourceOffsets: perBuffer(c.sourceOffsets),
    destinationOffsets: perBuffer(c.destinationOffsets),
    numBuffers: device ? p.uniform(up(new Uint32Array([n]), 'u32') as DeviceArray<'u32'>, { min: 0, max: n }) : p.uniform(n, { min: 0, max: n }),
  };
  return { args, destination, owned };
}

async function copyCase(backend: Backend, c: CopyCase, dtype: Dtype, device: boolean, forced: BatchedCopyVariant[] | [undefined]): Promise<SubsetCase[]> {
  const out: SubsetCase[] = [];
  for (const variant of forced) {
    const { args, destination, owned } = upload(backend, c, dtype, device);
    try {
      const started = performance.now();
      const plan = DeviceBatchedCopy.plan(args, env({ backend, tuning: variant === undefined ? {} : { variant } }));
      await runWithOwnTemp(backend, plan);
      const words = bits(await backend.download(destination));
      plan.destroy();
      out.push({ name: c.name, variant: plan.variant, forced: variant, outputs: [compared('destination', words, expectedDestination(c))], ms: performance.now() - started });
    } finally {
      for (const a of owned) a.destroy();
    }
  }
  return out;
}

/** The copy subset on a fresh WebGPU backend. */
export function runCopySubset(): Promise<SubsetOutcome> {
  return onBackend('DeviceBatchedCopy', batchedCopyVariants, () => webgpuBackend(), async (backend) => {
    const cases: SubsetCase[] = [];
    const boundary = layoutCase('f32 words with specials, sizes at boundaries', [0, 1, 31, 32, 33, 0, 255, 256, 257, 1023, 1024, 1025], 1);
    cases.push(...(await copyCase(backend, boundary, 'f32', false, [...batchedCopyVariants])));
    const sizes = Array.from({ length: 40 }, (_, i) => (i % 9 === 0 ? 0 : (i * 37) % 300));
    cases.push(...(await copyCase(backend, layoutCase('i32, device-only sizes, offsets and numBuffers', sizes, 2), 'i32', true, [undefined])));

    // Buffer 2 starts on buffer 1's last element, known only on the device: nothing written.
    const base = layoutCase('bad', [5, 40, 3, 0, 17], 5);
    const destinationOffsets = [...base.destinationOffsets];
    destinationOffsets[2] = destinationOffsets[1]! + 39;
    const bad: CopyCase = { ...base, destinationOffsets };
    const { args, destination, owned } = upload(backend, bad, 'f32', true);
    const violation = await violationOf(
      backend,
      async () => {
        const plan = DeviceBatchedCopy.plan(args, env({ backend, requirements: { guaranteeChecks: 'validate' } }));
        await runWithOwnTemp(backend, plan);
        plan.destroy();
      },
      [{ array: destination, before: destinationBefore(bad) }],
    );
    for (const a of owned) a.destroy();
    return { cases, violation };
  });
}
