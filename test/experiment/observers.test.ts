// The shared observers (src/experiment/observers.ts): every error no wait can cure ends every
// wait at once with its code, whichever stream met it; any other failure is remembered; a
// stream that ends because observing stopped is no error. Used by `run` and `rollout` alike.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DraincheckError } from '../../src/errors.js';
import { fatalObserverErrors } from '../../src/experiment/failures.js';
import { Observers, type ObserverError } from '../../src/experiment/observers.js';

async function* failing(error: unknown): AsyncGenerator<number> {
  yield await Promise.resolve(1);
  throw error;
}

async function* endless(signal: AbortSignal): AsyncGenerator<number> {
  yield 0;
  await new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  throw new Error('aborted');
}

for (const code of fatalObserverErrors) {
  test(`observers: ${code} from a stream ends every wait at once, with its code and hint`, async () => {
    const stopped = new AbortController();
    const seen: ObserverError[] = [];
    const observers = new Observers(stopped.signal, (e) => seen.push(e));
    // A wait that would otherwise last: another stream still running.
    void observers.observe('Pod watch', endless(observers.signal), () => undefined);
    void observers.observe(
      'Deployment watch',
      failing(new DraincheckError(code, 'refused', { hint: 'do X' })),
      () => undefined,
    );
    await new Promise<void>((resolve) =>
      observers.signal.addEventListener('abort', () => resolve(), { once: true }),
    );
    assert.equal(observers.fatalError?.code, code);
    assert.equal(observers.fatalError?.oneLine(), 'refused (do X)');
    assert.deepEqual(seen, [{ observer: 'Deployment watch', message: 'refused', code }]);
    assert.equal(observers.failure, null);
    stopped.abort();
    await observers.settled();
  });
}

test('observers: another error is remembered, not fatal; an error after observing stopped is none', async () => {
  const stopped = new AbortController();
  const observers = new Observers(stopped.signal);
  await observers.observe(
    'EndpointSlice watch',
    failing(new DraincheckError('DC_KUBE_API', 'gone away')),
    () => undefined,
  );
  assert.equal(observers.signal.aborted, false);
  assert.equal(observers.fatalError, null);
  assert.equal(observers.failure, 'the EndpointSlice watch stream failed: gone away');
  stopped.abort();
  await observers.observe('log', failing(new DraincheckError('DC_KUBE_FORBIDDEN', 'late')), () => undefined);
  assert.equal(observers.fatalError, null, 'ignored once observing stopped');
});
