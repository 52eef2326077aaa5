/**
 * Migration assistance: migrations, staged counterparties, staging results, jobs, log entries.
 * The staged-counterparty schema is shared by the service (staging) and the pipeline (the
 * check before upload), so both refuse exactly the same records with the same field codes.
 */
import { z } from 'zod';
import { externalReferenceSchema, isoDate, timestamp, uuid } from './shared.js';
import { fieldIssues } from './field-errors.js';

export const COMPONENTS = ['Counterparties', 'Collaterals', 'FinancingSolutions', 'FinancingExecutions', 'Administrate'] as const;
export const componentSchema = z.enum(COMPONENTS);
export type Component = z.infer<typeof componentSchema>;

export const PHASE_STATUSES = ['Pending', 'InProgress', 'Completed'] as const;
export const phaseStatusSchema = z.enum(PHASE_STATUSES);
export type PhaseStatus = z.infer<typeof phaseStatusSchema>;

/** `Active` while a migration can still run jobs; `Completed` and `Canceled` are final. */
export const ACTIVITIES = ['Active', 'Completed', 'Canceled'] as const;
export type Activity = (typeof ACTIVITIES)[number];

/**
 * Whether a migration's activity says it is canceled: the spec's `Canceled`, or the British
 * `Cancelled` another platform may write, in any case. Anything else is not read as canceled.
 */
export function isCanceledActivity(activity: string | undefined): boolean {
  return activity !== undefined && /^cancell?ed$/i.test(activity);
}

export const migrationComponentSchema = z.object({
  component: componentSchema,
  stagingStatus: phaseStatusSchema,
  importStatus: phaseStatusSchema,
  numberOfStagedEntities: z.number().int(),
  numberOfImportedEntities: z.number().int(),
});
export const migrationSchema = z.object({
  referenceId: uuid,
  stagingStatus: phaseStatusSchema,
  importStatus: phaseStatusSchema,
  numberOfStagedEntities: z.number().int(),
  numberOfImportedEntities: z.number().int(),
  activity: z.enum(ACTIVITIES),
  components: z.array(migrationComponentSchema),
});
export type Migration = z.infer<typeof migrationSchema>;

export const createMigrationSchema = z.object({ components: z.array(componentSchema).min(1) });
export type CreateMigration = z.infer<typeof createMigrationSchema>;

// ---------------------------------------------------------------------------------------------
// Staged counterparty

export const STAGED_TYPES = ['person', 'organisation'] as const;

const telephoneNumberSchema = z.object({
  type: z.string().min(1).optional(),
  number: z.string().min(1),
  countryCode: z.string().optional(),
});
const addressSchema = z.object({
  referenceId: uuid,
  type: z.string().min(1),
  addressLine1: z.string().min(1),
  addressLine2: z.string().optional(),
  houseNumber: z.string().optional(),
  postalCode: z.string().min(1),
  locality: z.string().min(1),
  countryCode: z.string().min(1),
});
const relationSchema = z.object({ to: uuid, type: z.string().min(1) });
const incomeSchema = z.object({ amount: z.number(), currency: z.string().length(3), frequency: z.string().min(1) });

const stagedCommon = {
  referenceId: uuid,
  isActive: z.boolean().optional(),
  countryCode: z.string().optional(),
  preferredCommunicationLanguage: z.string().optional(),
  telephoneNumbers: z.array(telephoneNumberSchema).optional(),
  externalReferences: z.array(externalReferenceSchema).optional(),
  ratings: z.array(z.record(z.string(), z.unknown())).optional(),
  associatedParties: z.array(z.record(z.string(), z.unknown())).optional(),
  addresses: z.array(addressSchema).optional(),
  relations: z.array(relationSchema).optional(),
  emailAddress: z.string().optional(),
};

export const stagedPersonSchema = z.object({
  ...stagedCommon,
  type: z.literal('person'),
  initials: z.string().min(1),
  firstName: z.string().optional(),
  surnamePrefix: z.string().optional(),
  surname: z.string().min(1),
  salutation: z.string().optional(),
  sex: z.string().optional(),
  dateOfBirth: isoDate.optional(),
  nationalities: z.array(z.string().min(2)).optional(),
  income: incomeSchema.optional(),
});

/** Organisation shape: our choice from the streamed-counterparty fields (docs/contract-gaps.md). */
export const stagedOrganisationSchema = z.object({
  ...stagedCommon,
  type: z.literal('organisation'),
  organisationName: z.string().min(1),
  cocNumber: z.string().min(1),
  countryOfIncorporation: z.string().optional(),
});

export const stagedCounterpartySchema = z.discriminatedUnion('type', [stagedPersonSchema, stagedOrganisationSchema]);
export type StagedPerson = z.infer<typeof stagedPersonSchema>;
export type StagedOrganisation = z.infer<typeof stagedOrganisationSchema>;
export type StagedCounterparty = z.infer<typeof stagedCounterpartySchema>;

/**
 * The schema with zod's ahead-of-time compiled fast path (`z.compile`), for the one check every
 * record passes, on both sides of an upload. A valid record takes generated code (about 2 instead
 * of 5 µs a person); an invalid one falls back to the runtime parser, so its issues are exactly
 * the runtime's. Should zod ever decline to compile this schema, the runtime parser answers.
 */
const compiledStagedCounterpartySchema = z.compile(stagedCounterpartySchema);

export const stagingErrorSchema = z.object({ field: z.string(), message: z.string() });
export type StagingError = z.infer<typeof stagingErrorSchema>;

export const stagingResultSchema = z.object({
  referenceId: z.string(),
  isSuccessful: z.boolean(),
  errors: z.array(stagingErrorSchema),
});
export type StagingResult = z.infer<typeof stagingResultSchema>;
/**
 * Takes one staging result as it is read (index from 0, in the answer's order; 0 again when a
 * retried upload's answer is read), for a reader that checks results instead of collecting them.
 */
export type StagingResultVisitor = (result: StagingResult, index: number) => void;

/**
 * Checks one record as staging does. Returns the parsed record (unknown fields stripped, so a
 * record cannot set server-owned state) or the list of field errors with their codes.
 * @example checkStagedCounterparty({ referenceId: '…', type: 'person' }).errors
 *   // [{ field: 'initials', message: 'MISSING_REQUIRED_FIELD' }, { field: 'surname', … }]
 */
export function checkStagedCounterparty(input: unknown): { ok: true; record: StagedCounterparty } | { ok: false; errors: StagingError[] } {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    return { ok: false, errors: [{ field: '', message: 'MALFORMED_RECORD' }] };
  }
  const parsed = compiledStagedCounterpartySchema.safeParse(input);
  if (parsed.success) return { ok: true, record: parsed.data };
  // A missing or unknown `type` fails the discriminated union at the root: name the field.
  return { ok: false, errors: fieldIssues(input, parsed.error).map((i) => ({ field: i.field || 'type', message: i.message })) };
}

/**
 * Whether staging would accept the record, for callers that only count (`plan`): zod's compiled
 * validator (`schema.validate`), which skips the parse's result and wrapper, 2.3 instead of
 * 2.7-2.9 µs a generated person. zod 4.6 still builds the nested arrays and objects inside it.
 * @example isStagedCounterparty(record) ? 'would stage' : checkStagedCounterparty(record).errors
 */
export function isStagedCounterparty(input: unknown): boolean {
  return typeof input === 'object' && input !== null && !Array.isArray(input) && compiledStagedCounterpartySchema.validate(input);
}

// ---------------------------------------------------------------------------------------------
// Jobs

export const JOB_TYPES = ['ValidateStaging', 'Import', 'Counts'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const runningJobSchema = z.object({ referenceId: uuid, componentsCompleted: z.array(z.string()) });
// A job result's lists default to empty: a platform may leave an empty array out of its JSON
// (docs/contract-gaps.md, `empty-arrays=omitted`), and an absent list of errors is no error.
export const validationResultSchema = z.object({
  referenceId: uuid,
  jobType: z.literal('ValidateStaging'),
  isValid: z.boolean(),
  errors: z
    .array(
      z.object({
        component: z.string(),
        referenceId: z.string(),
        field: z.string(),
        message: z.string(),
        /** DUPLICATE_IDENTITY: the record staged first with the same identity, which was kept; on a platform that keeps none, another record of the group, refused as well (docs/contract-gaps.md). */
        duplicateOf: z.string().optional(),
        /** DUPLICATE_IDENTITY: the identity the two share, as the records give it (personal data: mask before showing). */
        identity: z.string().optional(),
      }),
    )
    .default([]),
});
export const importResultSchema = z.object({
  referenceId: uuid,
  jobType: z.literal('Import'),
  status: z.string(),
  numberOfStagedEntities: z.number().int(),
  numberOfImportedEntities: z.number().int(),
  errors: z.array(z.looseObject({ component: z.string(), message: z.string() })).default([]),
});
export const countsTableSchema = z.object({
  type: z.string(),
  headers: z.array(z.string()).default([]),
  stagedRows: z.array(z.array(z.string())).default([]),
  importedRows: z.array(z.array(z.string())).default([]),
});
export const countsResultSchema = z.object({
  referenceId: uuid,
  jobType: z.literal('Counts'),
  counts: z.array(countsTableSchema).default([]),
});
export const jobResultSchema = z.discriminatedUnion('jobType', [validationResultSchema, importResultSchema, countsResultSchema]);
export type RunningJob = z.infer<typeof runningJobSchema>;
export type ValidationResult = z.infer<typeof validationResultSchema>;
export type ImportResult = z.infer<typeof importResultSchema>;
export type CountsResult = z.infer<typeof countsResultSchema>;
export type JobResult = z.infer<typeof jobResultSchema>;

// ---------------------------------------------------------------------------------------------
// Logs

export const LOG_LEVELS = ['DEBUG', 'INFO', 'WARN', 'ERROR'] as const;
export const logEntrySchema = z.looseObject({
  sequenceNumber: z.number().int().optional(),
  component: z.string(),
  entityReferenceIds: z.array(z.string()).default([]),
  action: z.string(),
  timestamp: timestamp,
  message: z.string(),
  logLevel: z.enum(LOG_LEVELS),
});
export type LogEntry = z.infer<typeof logEntrySchema>;

export interface LogQuery {
  EntityReferenceIds?: string[];
  Components?: string[];
  Actions?: string[];
  LogLevels?: string[];
  After?: string;
  Before?: string;
  'continue-from'?: number;
}
