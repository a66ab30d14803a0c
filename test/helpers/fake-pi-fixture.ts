/**
 * The real pi's surroundings for the tests of a `describe`: the fake model server and a pi home
 * pointing at it, made before those tests and removed after them. Call it before `useDaemon`
 * when the daemon's environment names them (`extraEnv: () => fp.pi.env`): vitest runs `afterAll`
 * hooks in reverse order, so they outlive the daemon.
 */
import { afterAll, beforeAll } from 'vitest';
import { startFakeModel, type FakeModel, type FakeScript } from './fake-model.js';
import { piHome, type PiHome } from './pi-home.js';

export interface FakePi {
  readonly model: FakeModel;
  readonly pi: PiHome;
}

/** `extras` writes what the tests add to the pi home (prompt templates, extensions). */
export function useFakePi(script: FakeScript, extras?: (pi: PiHome) => void): FakePi {
  let model: FakeModel | null = null;
  let pi: PiHome | null = null;
  beforeAll(async () => {
    model = await startFakeModel(script);
    pi = piHome(model.baseUrl);
    extras?.(pi);
  });
  afterAll(async () => {
    pi?.cleanup();
    await model?.close();
  });
  const ready = <T>(part: T | null, what: string): T => {
    if (part === null) throw new Error(`the fake pi's ${what} is used before its beforeAll ran`);
    return part;
  };
  return {
    get model() {
      return ready(model, 'model');
    },
    get pi() {
      return ready(pi, 'home');
    },
  };
}
