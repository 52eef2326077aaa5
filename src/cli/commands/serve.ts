/** `stagecoach serve`: runs the embedded lending service until SIGINT or SIGTERM. */
import type { Command } from 'commander';
import { StagecoachError } from '../../contract/errors.js';

/** A whole-number flag in [min, max], or a clear usage error (exit 2) naming the flag and the value. */
const wholeNumber = (flag: string, min: number, max: number) => (v: string) => {
  const n = Number(v);
  if (!/^\d+$/.test(v.trim()) || n < min || n > max)
    throw new StagecoachError('CONFIG_INVALID', `${flag} expects a whole number from ${min} to ${max}, got ${JSON.stringify(v)}`);
  return n;
};

/**
 * The service's log on stderr — stdout carries only the address, as its first line — as JSON
 * lines when stderr is not a terminal (log shippers), readable lines on a terminal.
 */
async function serviceLogger(level: string) {
  const { default: pino } = await import('pino');
  const base = { level, base: { service: 'embedded-lending-service' } };
  if (!process.stderr.isTTY) return pino(base, pino.destination({ dest: 2, sync: true }));
  const { default: pretty } = await import('pino-pretty');
  return pino(base, pretty({ destination: 2, sync: true, ignore: 'pid,hostname,service' }));
}

export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('Run the embedded lending service on 127.0.0.1, state kept in SQLite under --data')
    .option('--port <n>', 'port on 127.0.0.1 (0 picks a free one)', wholeNumber('--port', 0, 65535), 8787)
    .option('--data <dir>', 'folder for the SQLite database and keys', './.stagecoach/service')
    .option('--token-ttl <seconds>', 'access token lifetime in seconds', wholeNumber('--token-ttl', 1, 86_400), 300)
    .option('--log-level <level>', 'pino log level (fatal…trace, silent)', 'info')
    .option('--faults <spec>', 'fault injection, e.g. "*:status=503:p=0.1" (docs/fault-injection.md)')
    .option('--alter <spec>', 'import some records altered, e.g. "surname:truncate=30;*:lose:p=0.01" (docs/fault-injection.md)')
    .option('--fault-seed <n>', 'seed of the fault-injection generator', wholeNumber('--fault-seed', 0, 2 ** 31), 1)
    .option(
      '--dialect <switches>',
      'answer with the alternatives to the service’s own choices: nulls, counters-from-0, token-envelope, token-body=string|plain|result|jwt|response|payload, staging-container=array|results|items|data|pretty, timestamps=basic|comma|offset|offset-colon|offset-hour|ordinal|week, counts=totals-only|more, gzip|deflate|br, counter-name=<name>, job-id=object, jwks=set, errors=envelope|plain|message|error-text, definitions=single, job-running=status|empty, pages=data, rejections=422|400, missing-files=422|400, definition-refused=400|404, message-created=200, resend=409, upload=201, registrations=no-token, duplicates=unlinked|refuse-all, event-groups=process-orchestration|lodging, import-status=Succeeded, activity=Cancelled, country=derived, uuids=upper|upper-stream, text=nfd, dates=basic|ordinal|week, amounts=string, empty-arrays=omitted, upload-limit=16k|64k|1m, redirects=307|308, empty-coding=gzip, actions=upper-snake|kebab, process-status=upper-snake, registration-ids=opaque, deliveries=twice|shuffled, envelope=extra|extra-data, or a preset (all, all-second … all-tenth); docs/contract-gaps.md',
    )
    .option('--job-rate <records/s>', 'slow background jobs down to this many records per second', Number)
    .option('--allow-private-webhooks', 'allow webhook uris on private networks', false)
    // Loopback receivers stay allowed by default (demos and tests receive on loopback); a
    // service that others can reach turns them off so no token can make it POST to local ports.
    .option('--no-loopback-webhooks', 'refuse webhook uris on loopback (127.0.0.0/8, ::1, localhost) with 422 WEBHOOK_URI_REFUSED')
    .option('--max-staging-bytes <n>', 'byte limit of one staging upload request', (v) => Number.parseInt(v, 10))
    .option('--max-record-bytes <n>', 'byte limit of one staged record', (v) => Number.parseInt(v, 10))
    .option(
      '--idle-timeout <seconds>',
      'close a connection that sends and receives nothing this long (an upload whose body stops)',
      wholeNumber('--idle-timeout', 1, 86_400),
      60,
    )
    .option(
      '--request-timeout <seconds>',
      'longest time to receive one whole request, headers and body (408 after)',
      wholeNumber('--request-timeout', 1, 86_400),
      1800,
    )
    .option(
      '--headers-timeout <seconds>',
      'longest time to receive the headers of a request (408 after)',
      wholeNumber('--headers-timeout', 1, 86_400),
      60,
    )
    .action(async (opts) => {
      // Loaded here, not at start-up: the service (fastify, XML schemas) is heavy and only
      // `serve` and `demo` need it, so every other command starts lighter.
      const { startService } = await import('../../service/index.js');
      const service = await startService({
        logger: await serviceLogger(opts.logLevel),
        port: opts.port,
        dataDir: opts.data,
        tokenTtlSeconds: opts.tokenTtl,
        logLevel: opts.logLevel,
        faults: opts.faults,
        faultSeed: opts.faultSeed,
        dialect: opts.dialect,
        alterations: opts.alter,
        jobRecordsPerSecond: opts.jobRate,
        allowPrivateWebhooks: opts.allowPrivateWebhooks,
        allowLoopbackWebhooks: opts.loopbackWebhooks,
        maxStagingBytes: opts.maxStagingBytes,
        maxRecordBytes: opts.maxRecordBytes,
        idleTimeoutMs: opts.idleTimeout * 1000,
        requestTimeoutMs: opts.requestTimeout * 1000,
        headersTimeoutMs: opts.headersTimeout * 1000,
      }).catch((err: NodeJS.ErrnoException) => {
        if (err.code !== 'EADDRINUSE') throw err;
        throw new StagecoachError(
          'CONFIG_INVALID',
          `port ${opts.port} on 127.0.0.1 is in use (another service?): stop what holds it, or choose another with --port (0 picks a free one)`,
        );
      });
      // The first line on stdout is the base URL: scripts and tests read it.
      process.stdout.write(`${service.url}\n`);
      await new Promise<void>((resolveStop) => {
        const stop = () => resolveStop();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      await service.close();
    });
}
