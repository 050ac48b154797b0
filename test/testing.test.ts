/**
 * segkit/testing: backend enumeration (skips with reasons, required backends), runs on every
 * backend, and the first bit-level difference named by output, segment, slot, values and backends.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { type Backend, DeviceBatchedTopK, env, p } from '../src/index.js';
import { BackendMismatchError, type BackendRun, type RunContext, firstDifference, testBackendNames, testBackends } from '../src/testing.js';
import { referenceOfRows } from './helpers.js';

process.env.LP_NUM_THREADS ??= '1';
vi.setConfig({ testTimeout: 60_000, hookTimeout: 60_000 });

const backends = await testBackends({ workers: 1 });
afterAll(() => backends.destroy());

const f32Bits = (values: number[]) => new Uint32Array(new Float32Array(values).buffer);

describe('testBackends', () => {
  it('enumerates every backend in order, each available or skipped with a reason', () => {
    expect(backends.entries.map((e) => e.name)).toEqual(['cpu', 'cpu-workers', 'webgpu']);
    expect(testBackendNames).toEqual(['cpu', 'cpu-workers', 'webgpu']);
    // Node has worker threads: both CPU backends always run here.
    expect(backends.available.map((e) => e.name).slice(0, 2)).toEqual(['cpu', 'cpu-workers']);
    const webgpu = backends.entries[2]!;
    if (webgpu.skip !== undefined) {
      expect(webgpu.skip).toMatch(/WebGPU|webgpu/);
      expect(process.env.CI, `WebGPU skipped in CI: ${webgpu.skip}`).toBeUndefined();
    }
  });

  it("'only' picks and orders backends; unknown names and unmet requirements are rejected", async () => {
    const cpuOnly = await testBackends({ only: ['cpu-workers', 'cpu'] });
    expect(cpuOnly.entries.map((e) => e.name)).toEqual(['cpu-workers', 'cpu']);
    await expect(testBackends({ only: ['cuda' as 'cpu'] })).rejects.toThrow("testBackends: 'cuda' is not a backend name; expected 'cpu', 'cpu-workers', 'webgpu'");
    await expect(testBackends({ only: ['cpu'], required: ['webgpu'] })).rejects.toThrow("testBackends: 'webgpu' is required but not among the backends asked for (only)");
    const webgpu = backends.entries[2]!;
    if (webgpu.skip !== undefined) {
      await expect(testBackends({ only: ['webgpu'], required: ['webgpu'] })).rejects.toThrow(`testBackends: 'webgpu' is required but cannot run here: ${webgpu.skip}`);
      await expect(webgpu.backend()).rejects.toThrow(`webgpu is skipped here: ${webgpu.skip}`);
    } else {
      expect((await testBackends({ only: ['webgpu'], required: ['webgpu'] })).available.map((e) => e.name)).toEqual(['webgpu']);
    }
  });

  it("'cpu-workers' runs workgroups on worker threads; 'cpu' on the calling thread", async () => {
    const stats = (b: unknown) => (b as { workerStats(): { workers: number; workgroupsOnWorkers: number } }).workerStats();
    const workers = await backends.entries[1]!.backend();
    expect(stats(workers).workers).toBe(1);
    expect(stats(workers).workgroupsOnWorkers).toBeGreaterThan(0);
    expect(stats(await backends.entries[0]!.backend()).workers).toBe(0);
    // The shared backend is created once; create() gives a new one the caller owns.
    expect(await backends.entries[0]!.backend()).toBe(await backends.entries[0]!.backend());
    const own = await backends.entries[0]!.create();
    expect(own).not.toBe(await backends.entries[0]!.backend());
    own.destroy();
  });
});

describe('run and compare', () => {
  const rows = 37;
  const cols = 300;
  const k = 5;
  const keys = new Float32Array(rows * cols).map((_, i) => Math.round(Math.sin(i * 0.7) * 50) / 4); // many ties
  keys[3] = Number.NaN;
  keys[cols + 1] = -0;

  async function topK(backend: Backend, run: RunContext) {
    const keysIn = run.track(backend.upload(keys));
    const keysOut = run.track(backend.alloc('f32', rows * k));
    const valuesOut = run.track(backend.alloc('u32', rows * k));
    await DeviceBatchedTopK.select(
      { keysIn, keysOut, valuesOut, segmentSizes: p.constant(cols), k: p.constant(k), selectDirection: p.constantOption('max'), numSegments: p.uniform(rows) },
      env({ backend }),
    );
    return { keysOut, valuesOut };
  }

  it('runs a test on every available backend; the outputs agree with each other and with the reference', async () => {
    const tracked: { destroyed: boolean }[] = [];
    const comparison = await backends.compare(
      async (backend, run) => {
        const outputs = await topK(backend, {
          name: run.name,
          track: (array, ...more) => {
            tracked.push(array, ...more);
            return run.track(array, ...more);
          },
        });
        return outputs;
      },
      { slotsPerSegment: k },
    );
    expect(comparison.runs.map((r) => r.name)).toEqual(backends.available.map((e) => e.name));
    expect(comparison.skipped.map((s) => s.name)).toEqual(backends.entries.filter((e) => e.skip).map((e) => e.name));
    expect(comparison.difference).toBeUndefined();
    // Tracked arrays are destroyed once the outputs are downloaded.
    expect(tracked.length).toBe(3 * comparison.runs.length);
    expect(tracked.every((a) => a.destroyed)).toBe(true);
    const expected = referenceOfRows(keys, rows, cols, k, 'max', k);
    const reference: BackendRun = { name: 'reference', outputs: { keysOut: new Float32Array(expected.keys.buffer), valuesOut: expected.values } };
    expect(firstDifference([...comparison.runs, reference], { slotsPerSegment: k })).toBeUndefined();
    expect(comparison.runs[0]!.outputs.keysOut[0]).toBeNaN();
  });

  it('names the first difference: output, segment, slot, both values with their bits, both backends', async () => {
    // A test whose result depends on the backend: the second backend's row 2 differs in slots 3 and 4.
    const comparison = await backends.compare(
      async (backend, run) => {
        const outputs = await topK(backend, run);
        const values = await backend.download(outputs.valuesOut);
        if (run.name !== 'cpu') {
          values[2 * k + 3] = 1234;
          values[2 * k + 4] = 4321;
        }
        return { keysOut: outputs.keysOut, valuesOut: values };
      },
      { slotsPerSegment: k },
    );
    const d = comparison.difference!;
    expect(d).toBeDefined();
    expect(d.output).toBe('valuesOut');
    expect(d.kind).toBe('value');
    expect([d.segment, d.slot, d.index]).toEqual([2, 3, 13]);
    expect(d.reference.backend).toBe('cpu');
    expect(d.other.backend).toBe('cpu-workers');
    expect(d.other.value).toBe(1234);
    expect(d.reference.value).toBe(comparison.runs[0]!.outputs.valuesOut[13]);
    expect(d.differingElements).toBe(2);
    const r = d.reference.value!;
    expect(d.message).toBe(
      `valuesOut differs between cpu and cpu-workers at segment 2, slot 3 (element 13): cpu has ${r} (bits 0x${r.toString(16).padStart(8, '0')}), cpu-workers has 1234 (bits 0x000004d2); 2 elements differ`,
    );
    await expect(
      backends.assertSame(async (backend, run) => {
        const outputs = await topK(backend, run);
        const values = await backend.download(outputs.valuesOut);
        if (run.name !== 'cpu') values[2 * k + 3] = 1234;
        return { valuesOut: values };
      }, { slotsPerSegment: k }),
    ).rejects.toSatisfy((error: unknown) => error instanceof BackendMismatchError && error.difference.segment === 2 && error.runs.length === backends.available.length);
  });
});

describe('firstDifference', () => {
  const run = (name: string, outputs: BackendRun['outputs']): BackendRun => ({ name, outputs });

  it('compares bits: -0 differs from +0, NaN payloads differ, equal NaNs agree', () => {
    const zeros = firstDifference([run('a', { keys: new Float32Array([1, 0]) }), run('b', { keys: new Float32Array([1, -0]) })]);
    expect(zeros?.message).toBe('keys differs between a and b at element 1: a has 0 (bits 0x00000000), b has -0 (bits 0x80000000); 1 element differ');
    const nanA = new Float32Array(new Uint32Array([0x7fc00000]).buffer);
    const nanB = new Float32Array(new Uint32Array([0x7fc00001]).buffer);
    expect(firstDifference([run('a', { keys: nanA }), run('b', { keys: nanA.slice() })])).toBeUndefined();
    expect(firstDifference([run('a', { keys: nanA }), run('b', { keys: nanB })])?.message).toBe(
      'keys differs between a and b at element 0: a has NaN (bits 0x7fc00000), b has NaN (bits 0x7fc00001); 1 element differ',
    );
  });

  it('reports lengths, dtypes and missing outputs, and checks every run against the first', () => {
    const base = run('cpu', { keys: new Float32Array(f32Bits([1, 2, 3]).buffer), values: new Int32Array([0, 1, 2]) });
    expect(firstDifference([base, run('gpu', { keys: new Float32Array([1, 2]), values: new Int32Array([0, 1, 2]) })], { slotsPerSegment: 2 })?.message).toBe(
      'keys differs between cpu and gpu at segment 1, slot 0 (element 2): cpu has 3 (bits 0x40400000), gpu has no element there (length 2); 0 elements differ; lengths 3 and 2',
    );
    expect(firstDifference([base, run('gpu', { keys: new Float32Array([1, 2, 3]), values: new Uint32Array([0, 1, 2]) })])?.message).toBe(
      'values differs between cpu and gpu: cpu gave i32, gpu gave u32',
    );
    expect(firstDifference([base, run('gpu', { keys: new Float32Array([1, 2, 3]) })])?.message).toBe("values differs between cpu and gpu: gpu returned no output 'values'");
    // The third run is the one that differs; per-output slots.
    const third = firstDifference([base, base, run('webgpu', { keys: new Float32Array([1, 2, 3]), values: new Int32Array([0, 1, -1]) })], { slotsPerSegment: { values: 3 } });
    expect([third?.other.backend, third?.segment, third?.slot, third?.other.value]).toEqual(['webgpu', 0, 2, -1]);
    expect(() => firstDifference([base, run('gpu', { keys: new Float32Array([1, 2, 4]), values: new Int32Array([0, 1, 2]) })], { slotsPerSegment: 0 })).toThrow(
      'slotsPerSegment: 0 is not a positive integer',
    );
    expect(firstDifference([base])).toBeUndefined();
    expect(firstDifference([])).toBeUndefined();
  });
});
