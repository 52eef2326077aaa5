/**
 * The limits a read of hostile input stops at, declared once: each with its default, what it
 * bounds, and the environment variable that changes it (docs/pipelines.md, "Limits"). A limit is
 * a property of the machine and the operator, not of the file being read, so it is never set by
 * the file itself (a YAML document cannot raise its own alias limit). Past a limit the read
 * stops with the file, the place and the limit named.
 */
import { z } from 'zod';
import { StagecoachError } from '../contract/errors.js';

const count = (min: number) => z.coerce.number().int().min(min);

/** The limits, by environment variable. */
export const readLimitsSchema = z.strictObject({
  STAGECOACH_YAML_MAX_ALIASES: count(0)
    .default(100)
    .describe('aliases (*name) a pipeline or mapping YAML document may resolve, counted as the yaml library counts them; default 100'),
  STAGECOACH_LAYOUT_MAX_FIELD: count(1)
    .default(65_536)
    .describe('characters one field of a record layout (a copybook PIC or a name,start,length row) may span; default 65536'),
  STAGECOACH_JSON_MAX_LINE_CHARS: count(1024)
    .default(16 * 1024 * 1024)
    .describe(
      'characters of one JSON Lines line held in memory; a longer line is a row error, read past without holding it; default 16777216',
    ),
  STAGECOACH_JSON_MAX_DEPTH: count(1)
    .default(100)
    .describe('levels a JSON element may nest; a deeper one is a row error, not assembled; default 100'),
});
export type ReadLimits = z.output<typeof readLimitsSchema>;

/**
 * The limits in force: the defaults, changed by the environment variables set.
 * @example readLimits({ STAGECOACH_YAML_MAX_ALIASES: '500' }).STAGECOACH_YAML_MAX_ALIASES // 500
 */
export function readLimits(env: NodeJS.ProcessEnv = process.env): ReadLimits {
  const set = Object.fromEntries(Object.keys(readLimitsSchema.shape).flatMap((k) => (env[k] ? [[k, env[k]]] : [])));
  const parsed = readLimitsSchema.safeParse(set);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const name = String(issue.path[0]);
    throw new StagecoachError('CONFIG_INVALID', `${name}=${JSON.stringify(env[name])}: ${issue.message}, expected a whole number`, {
      field: name,
      value: env[name],
    });
  }
  return parsed.data;
}
