/**
 * GET /counterparty-management/counterparties: the tenant's live counterparties in sequence
 * order, one page at a time ({items, total, offset, limit}). Items have the streamed shape,
 * `sequenceNumber` included, so a client can move from the list to the stream at any item.
 */
import type { FastifyInstance } from 'fastify';
import { PAGE_DEFAULTS, PAGE_LIMIT_MAX, PAGE_LIMIT_MIN, type CounterpartyPage } from '../../contract/counterparty.js';
import type { ServiceContext } from '../context.js';
import { readIntegerParam } from './query.js';
import { renderCounterparty } from './render.js';
import { parseDialect } from '../dialect/switches.js';

export async function listRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  const fillIn = parseDialect(ctx.config.dialect).countryDerived === true;
  const count = ctx.db.prepare<[string], { n: number }>('SELECT COUNT(*) AS n FROM live_counterparties WHERE broker_key = ?');
  const page = ctx.db.prepare<[string, number, number], { seq: number; data: string }>(
    'SELECT seq, data FROM live_counterparties WHERE broker_key = ? ORDER BY seq LIMIT ? OFFSET ?',
  );
  app.get('/counterparty-management/counterparties', { config: { area: 'counterparty-management' } }, async (request) => {
    const offset = readIntegerParam(request.query, 'offset', { min: 0, fallback: PAGE_DEFAULTS.offset });
    const limit = readIntegerParam(request.query, 'limit', { min: PAGE_LIMIT_MIN, max: PAGE_LIMIT_MAX, fallback: PAGE_DEFAULTS.limit });
    const { brokerKey } = request.principal;
    // One read transaction so total and items describe the same moment.
    const body: CounterpartyPage = ctx.db.transaction(() => ({
      items: page.all(brokerKey, limit, offset).map((r) => renderCounterparty(r.seq, r.data, fillIn) as CounterpartyPage['items'][number]),
      total: count.get(brokerKey)!.n,
      offset,
      limit,
    }))();
    return body;
  });
}
