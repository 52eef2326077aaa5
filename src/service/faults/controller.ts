/**
 * The fault rules in force and the seeded generator that decides when they fire: shared by the
 * fault hooks (index.ts) and the admin endpoint that replaces the rules (route-admin.ts).
 */
import { createRandom, type Random } from './random.js';
import { parseFaultSpec, type FaultRule } from './rules.js';

/** The rules in force and the generator that decides when they fire. */
export class FaultController {
  rules: FaultRule[] = [];
  spec = '';
  seed: number;
  random: Random;

  constructor(spec: string | undefined, seed: number) {
    this.seed = seed;
    this.random = createRandom(seed);
    this.set(spec ?? '', seed);
  }

  /** Replaces the rules and restarts the generator from `seed` (throws CONFIG_INVALID on a bad spec). */
  set(spec: string, seed = this.seed): void {
    this.rules = parseFaultSpec(spec);
    this.spec = spec;
    this.seed = seed;
    this.random = createRandom(seed);
  }

  get active(): boolean {
    return this.rules.length > 0;
  }
}
