/** Fault injection (filled in by the fault-injection work). Off unless configured. */
import type { FastifyInstance } from 'fastify';
import type { ServiceContext } from '../context.js';

export function installFaults(_app: FastifyInstance, _ctx: ServiceContext): void {}
