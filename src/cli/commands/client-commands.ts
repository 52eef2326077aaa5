/**
 * Commands that talk to the platform through the client: `token`, `lodge`,
 * `counterparties list|export` and `webhooks list|subscribe|update|unsubscribe|listen`.
 * They parse flags, call the library (src/client) and print; connection settings come from
 * src/cli/connection.ts, printing from src/cli/output.ts.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type Command, Option } from 'commander';
import { EVENT_NAMES, groupOfEvent, unknownEventReason } from '../../contract/events.js';
import { StagecoachError } from '../../contract/errors.js';
import type { Registration, StagecoachClient } from '../../client/index.js';
import { exportCounterparties, type ExportFormat } from '../../client/export-counterparties.js';
import { lodgeFolder, type Party } from '../../client/lodge-folder.js';
import { createWebhookReceiver } from '../../client/webhook-receiver.js';
import { addConnectionOptions, clientFromOptions, type ConnectionFlags } from '../connection.js';
import { addJsonOption, printFields, printJson, printTable, progressLine } from '../output.js';

const ALL_EVENTS = [...EVENT_NAMES];

/** The `<event>` argument: a known event name, or a usage error (exit 2) with the closest one and the list. */
const eventName = (v: string) => {
  if (!groupOfEvent(v)) throw new StagecoachError('CONFIG_INVALID', `webhooks: ${unknownEventReason(v)}`);
  return v;
};

export function registerClientCommands(program: Command): void {
  registerToken(program);
  registerLodge(program);
  registerCounterparties(program);
  registerWebhooks(program);
}

/** Runs `work` with a client built from the command's flags, and closes it afterwards. */
async function withClient<T>(flags: ConnectionFlags, work: (client: StagecoachClient) => Promise<T>): Promise<T> {
  const client = await clientFromOptions(flags);
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

/** An AbortSignal that fires on the first Ctrl-C / SIGTERM (the second one exits at once). */
function interruptSignal(): { signal: AbortSignal; dispose(): void } {
  const ac = new AbortController();
  const stop = () => ac.abort(new StagecoachError('ABORTED', 'interrupted'));
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  return {
    signal: ac.signal,
    dispose() {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
    },
  };
}

const collect = (value: string, previous: string[] = []) => [...previous, value];

function parsePair(flag: string, value: string, first: string, second: string): [string, string] {
  const at = value.indexOf(':');
  if (at <= 0 || at === value.length - 1) {
    throw new StagecoachError('CONFIG_INVALID', `${flag}: expected ${first}:${second}, got ${JSON.stringify(value)}`, {
      field: flag,
      value,
    });
  }
  return [value.slice(0, at), value.slice(at + 1)];
}

function intOption(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new StagecoachError(
        'CONFIG_INVALID',
        `${flag}: expected a whole number from ${min}${max < Number.MAX_SAFE_INTEGER ? ` to ${max}` : ''}, got ${JSON.stringify(value)}`,
        { field: flag, value },
      );
    return n;
  };
}

// ---------------------------------------------------------------------------------------------
// token

function registerToken(program: Command): void {
  const cmd = program
    .command('token')
    .description('Get an access token and show what it grants (the token itself only with --raw)')
    .option('--raw', 'print only the token (a secret: for piping into other tools)')
    .option('--no-validate', 'do not ask the service to validate the token');
  addConnectionOptions(addJsonOption(cmd)).action(async (opts: ConnectionFlags & { raw?: boolean; json?: boolean; validate: boolean }) => {
    await withClient(opts, async (client) => {
      const t = await client.auth.token();
      if (opts.raw) {
        process.stdout.write(`${t.accessToken}\n`);
        return;
      }
      const validation = opts.validate ? await client.auth.validate() : undefined;
      const c = t.claims;
      const scopes = typeof c.scope === 'string' ? c.scope.split(' ').filter(Boolean) : [];
      const issuedAt = typeof c.iat === 'number' ? new Date(c.iat * 1000).toISOString() : undefined;
      const summary = {
        clientId: c.sub,
        brokerKey: c.broker ?? client.options.brokerKey,
        labelReferenceId: c.label ?? client.options.labelReferenceId,
        scopes,
        issuedAt,
        expiresAt: t.expiresAt.toISOString(),
        issuer: c.iss,
        valid: validation ? validation.valid !== false : undefined,
        baseUrl: client.options.baseUrl,
      };
      if (opts.json) return printJson(summary);
      const secondsLeft = Math.round((t.expiresAt.getTime() - Date.now()) / 1000);
      printFields([
        ['service', summary.baseUrl],
        ['client', summary.clientId],
        ['broker key', summary.brokerKey],
        ['label', summary.labelReferenceId],
        ['scopes', scopes.join(' ')],
        ['issued', issuedAt],
        ['expires', `${summary.expiresAt} (in ${secondsLeft} s)`],
        ['issuer', summary.issuer],
        ...(validation ? ([['validation', 'valid (GET /authentication/validation)']] as const) : []),
      ]);
    });
  });
}

// ---------------------------------------------------------------------------------------------
// lodge

function registerLodge(program: Command): void {
  const cmd = program
    .command('lodge')
    .description('Lodge a folder of files as one application: start a process, create the message, upload every file, send')
    .argument('<folder>', 'folder whose files are uploaded (CleanOrderFinancingRequest.xml and CleanOrderCounterparties.xml are required)')
    .option('--definition-code <code>', 'process definition code (= message type); default the LoanOrigination definition')
    .option('--external-ref <origin:id>', 'external reference of the process, e.g. crm:A-17 (repeatable)', collect, [])
    .option('--stakeholder <type:id>', 'primary entity of the application, e.g. Kvk:68750110 (default: the broker)')
    .option('--message-id <uuid>', 'message reference id (default: a new UUID)');
  addConnectionOptions(addJsonOption(cmd)).action(
    async (
      folder: string,
      opts: ConnectionFlags & { definitionCode?: string; externalRef: string[]; stakeholder?: string; messageId?: string; json?: boolean },
    ) => {
      const externalReferences = opts.externalRef.map((v) => {
        const [origin, referenceId] = parsePair('--external-ref', v, 'origin', 'id');
        return { origin, referenceId };
      });
      let stakeholder: Party | undefined;
      if (opts.stakeholder) {
        const [type, id] = parsePair('--stakeholder', opts.stakeholder, 'type', 'id');
        stakeholder = { type, id };
      }
      const interrupt = interruptSignal();
      try {
        await withClient(opts, async (client) => {
          const report = await lodgeFolder(client, folder, {
            ...(opts.definitionCode ? { definitionCode: opts.definitionCode } : {}),
            externalReferences,
            ...(stakeholder ? { stakeholder } : {}),
            ...(opts.messageId ? { messageId: opts.messageId } : {}),
            signal: interrupt.signal,
            onUpload: (f) => {
              if (!opts.json) process.stderr.write(`uploaded ${f.fileName} (${f.mimeType}, ${f.size} bytes)\n`);
            },
          });
          if (opts.json) return printJson(report);
          const m = report.message;
          printFields([
            ['process', report.processReferenceId],
            ['definition', `${report.definition.code} (${report.definition.referenceId})`],
            ['message', m.referenceId],
            ['status', m.status],
            ['sent on', m.sentOn],
          ]);
          process.stdout.write('\n');
          printTable(m.attachments ?? [], [
            { header: 'attachment', value: (a) => a.fileName },
            { header: 'mimeType', value: (a) => a.mimeType },
            { header: 'bytes', value: (a) => a.size, align: 'right' },
          ]);
        });
      } finally {
        interrupt.dispose();
      }
    },
  );
}

// ---------------------------------------------------------------------------------------------
// counterparties

function registerCounterparties(program: Command): void {
  const group = program.command('counterparties').description('List or export the live counterparties of the tenant');

  const list = group
    .command('list')
    .description('Show one page of counterparties')
    .option('--offset <n>', 'items to skip', intOption('--offset', 0), 0)
    .option('--limit <n>', 'items to show (1–100)', intOption('--limit', 1, 100), 20);
  addConnectionOptions(addJsonOption(list)).action(async (opts: ConnectionFlags & { offset: number; limit: number; json?: boolean }) => {
    await withClient(opts, async (client) => {
      const page = await client.counterparties.list({ offset: opts.offset, limit: opts.limit });
      if (opts.json) return printJson(page);
      printTable(page.items, [
        { header: 'seq', value: (c) => c.sequenceNumber, align: 'right' },
        { header: 'referenceId', value: (c) => c.referenceId },
        { header: 'type', value: (c) => c.type.replace(/^Streaming|Counterparty$/g, '') },
        { header: 'name', value: (c) => c.organisationName ?? [c.initials, c.surnamePrefix, c.surname].filter(Boolean).join(' ') },
        { header: 'country', value: (c) => c.countryCode },
      ]);
      const first = page.items.length ? page.offset + 1 : page.offset;
      process.stdout.write(`\n${page.items.length ? `${first}–${page.offset + page.items.length}` : 'none'} of ${page.total}\n`);
    });
  });

  const exp = group
    .command('export')
    .description('Write every counterparty to a file; if the file exists, continue after its last complete record')
    .addOption(new Option('--format <format>', 'file format').choices(['jsonl', 'json-seq', 'csv']).makeOptionMandatory())
    .requiredOption('--out <file>', 'file to write (continued when it exists)')
    .option('--fresh', 'start over instead of continuing an existing file');
  addConnectionOptions(addJsonOption(exp)).action(
    async (opts: ConnectionFlags & { format: ExportFormat; out: string; fresh?: boolean; json?: boolean }) => {
      const interrupt = interruptSignal();
      const progress = progressLine();
      try {
        await withClient(opts, async (client) => {
          const report = await exportCounterparties(client, {
            format: opts.format,
            out: opts.out,
            fresh: opts.fresh === true,
            signal: interrupt.signal,
            onProgress: (n) => progress.update(`exported ${n} counterparties…`),
          });
          progress.done();
          if (opts.json)
            return printJson({
              ...report,
              resumedAfter: report.resumedAfter ?? null,
              lastSequenceNumber: report.lastSequenceNumber ?? null,
            });
          const resumed =
            report.resumedAfter !== undefined
              ? ` (continued after sequenceNumber ${report.resumedAfter}${report.repairedBytes ? `; cut off ${report.repairedBytes} bytes of a half-written record` : ''})`
              : '';
          process.stdout.write(
            `exported ${report.written} counterpart${report.written === 1 ? 'y' : 'ies'} to ${report.file} as ${report.format}${resumed}; last sequenceNumber ${report.lastSequenceNumber ?? 'none'}\n`,
          );
        });
      } finally {
        progress.done();
        interrupt.dispose();
      }
    },
  );
}

// ---------------------------------------------------------------------------------------------
// webhooks

function eventOption(cmd: Command): Command {
  return cmd.addOption(new Option('--event <name>', 'event name (repeatable; default all)').choices(ALL_EVENTS).argParser(collect));
}

function registerWebhooks(program: Command): void {
  const group = program.command('webhooks').description('Manage webhook registrations and receive events');

  const list = eventOption(group.command('list').description('List webhook registrations')).option(
    '--show-tokens',
    'include each registration token (secrets)',
  );
  addConnectionOptions(addJsonOption(list)).action(
    async (opts: ConnectionFlags & { event?: string[]; showTokens?: boolean; json?: boolean }) => {
      await withClient(opts, async (client) => {
        const rows: Registration[] = [];
        for (const eventName of opts.event?.length ? opts.event : ALL_EVENTS) {
          for (const reg of await client.events.list(eventName, { tokens: opts.showTokens }))
            rows.push(opts.showTokens ? reg : { ...reg, token: undefined });
        }
        if (opts.json) return printJson(rows);
        if (rows.length === 0) return void process.stdout.write('no webhook registrations\n');
        printTable(rows, [
          { header: 'event', value: (r) => r.eventName },
          { header: 'id', value: (r) => r.id },
          { header: 'uri', value: (r) => r.uri, max: 80 },
          { header: 'created', value: (r) => r.createdOn },
          ...(opts.showTokens ? [{ header: 'token', value: (r: Registration) => r.token }] : []),
        ]);
      });
    },
  );

  const subscribe = group
    .command('subscribe')
    .description('Register a uri for one event name; prints the registration with its token')
    .argument('<event>', 'event name', eventName)
    .argument('<uri>', 'receiver address');
  addConnectionOptions(addJsonOption(subscribe)).action(async (event: string, uri: string, opts: ConnectionFlags & { json?: boolean }) => {
    await withClient(opts, async (client) => {
      const reg = await client.events.subscribe(event, uri);
      if (opts.json) return printJson(reg);
      printFields([
        ['id', reg.id],
        ['event', reg.eventName],
        ['uri', reg.uri],
        ['created', reg.createdOn],
        ['token', reg.token],
      ]);
    });
  });

  const update = group
    .command('update')
    .description('Point a registration at another uri')
    .argument('<event>', 'event name', eventName)
    .argument('<id>', 'registration id')
    .argument('<uri>', 'new receiver address');
  addConnectionOptions(addJsonOption(update)).action(
    async (event: string, id: string, uri: string, opts: ConnectionFlags & { json?: boolean }) => {
      await withClient(opts, async (client) => {
        await client.events.update(event, id, uri);
        if (opts.json) return printJson({ id, eventName: event, uri });
        process.stdout.write(`registration ${id} of ${event} now delivers to ${uri}\n`);
      });
    },
  );

  const unsubscribe = group
    .command('unsubscribe')
    .description('Delete a registration')
    .argument('<event>', 'event name', eventName)
    .argument('<id>', 'registration id');
  addConnectionOptions(addJsonOption(unsubscribe)).action(async (event: string, id: string, opts: ConnectionFlags & { json?: boolean }) => {
    await withClient(opts, async (client) => {
      await client.events.unsubscribe(event, id);
      if (opts.json) return printJson({ id, eventName: event, deleted: true });
      process.stdout.write(`registration ${id} of ${event} deleted\n`);
    });
  });

  const listen = group
    .command('listen')
    .description('Run a webhook receiver: verify X-Event-Token, drop duplicate event ids, print each event (Ctrl-C stops)')
    .option('--port <n>', 'port to listen on (0 picks a free one)', intOption('--port', 0, 65535), 8788)
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--path <path>', 'path of the receiver', '/webhooks')
    .option('--token <token>', 'accepted X-Event-Token (repeatable; env STAGECOACH_WEBHOOK_TOKEN)', collect, [])
    .addOption(
      new Option('--subscribe <event>', 'register this receiver for the event while listening, unregister on exit (repeatable)')
        .choices(ALL_EVENTS)
        .argParser(collect),
    )
    .option('--public-url <url>', 'address the service should deliver to (default http://<host>:<port><path>)')
    .option('--count <n>', 'stop after this many events', intOption('--count', 1));
  addConnectionOptions(addJsonOption(listen)).action(
    async (
      opts: ConnectionFlags & {
        port: number;
        host: string;
        path: string;
        token: string[];
        subscribe?: string[];
        publicUrl?: string;
        count?: number;
        json?: boolean;
      },
    ) => {
      const tokens = new Set(opts.token);
      if (process.env.STAGECOACH_WEBHOOK_TOKEN) tokens.add(process.env.STAGECOACH_WEBHOOK_TOKEN);
      const subscriptions = opts.subscribe ?? [];
      if (tokens.size === 0 && subscriptions.length === 0) {
        throw new StagecoachError(
          'CONFIG_INVALID',
          'webhooks listen: give --token <token> (or STAGECOACH_WEBHOOK_TOKEN) to verify deliveries, or --subscribe <event> to register this receiver and use its token',
        );
      }
      const path = opts.path.startsWith('/') ? opts.path : `/${opts.path}`;
      let received = 0;
      let finish: () => void = () => undefined;
      const finished = new Promise<void>((resolve) => (finish = resolve));
      const receiver = createWebhookReceiver({
        tokens: () => [...tokens],
        onEvent: (e) => {
          // Past --count, deliveries are not acknowledged (500), so the service keeps them.
          if (opts.count !== undefined && received >= opts.count) throw new Error('receiver is stopping');
          if (opts.json)
            process.stdout.write(`${JSON.stringify({ id: e.id, eventName: e.eventName, occurredOn: e.occurredOn, data: e.data })}\n`);
          else
            process.stdout.write(
              `${e.occurredOn ?? new Date().toISOString()}  ${e.eventName ?? '(no event name)'}  ${e.id ?? '(no id)'}  ${JSON.stringify(e.data ?? e.body)}\n`,
            );
          if (opts.count !== undefined && ++received >= opts.count) setImmediate(finish);
        },
      });
      const server = createServer((req, res) => {
        if ((req.url ?? '').split('?')[0] !== path) {
          req.resume();
          res.writeHead(404).end();
          return;
        }
        void receiver(req, res);
      });
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(opts.port, opts.host, () => resolve());
      });
      const port = (server.address() as AddressInfo).port;
      const url = opts.publicUrl ?? `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}${path}`;
      const client = subscriptions.length ? await clientFromOptions(opts) : undefined;
      const registered: Array<{ event: string; id: string }> = [];
      const interrupt = interruptSignal();
      interrupt.signal.addEventListener('abort', () => finish(), { once: true });
      try {
        for (const event of subscriptions) {
          const reg = await client!.events.subscribe(event, url);
          registered.push({ event, id: reg.id });
          tokens.add(reg.token);
        }
        // First line on stdout: where events are received (scripts and tests read it).
        process.stdout.write(
          opts.json
            ? `${JSON.stringify({ listening: url, subscribed: registered })}\n`
            : `listening on ${url}${registered.length ? ` (subscribed: ${registered.map((r) => `${r.event} ${r.id}`).join(', ')})` : ''}\n`,
        );
        await finished;
      } finally {
        interrupt.dispose();
        for (const r of registered) {
          await client!.events
            .unsubscribe(r.event, r.id)
            .catch((err: Error) => process.stderr.write(`stagecoach: could not unsubscribe ${r.event} ${r.id}: ${err.message}\n`));
        }
        if (registered.length && !opts.json)
          process.stderr.write(`unsubscribed ${registered.map((r) => `${r.event} ${r.id}`).join(', ')}\n`);
        await client?.close();
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    },
  );
}
