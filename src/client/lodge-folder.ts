/**
 * Lodges a folder of files as one application: finds the process definition, starts a process,
 * creates the draft message under a new UUID, uploads every file of the folder with the
 * mimeType of its extension (the two required files first), and sends the message.
 */
import { randomUUID } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import { extname, join } from 'node:path';
import { StagecoachError } from '../contract/errors.js';
import { REQUIRED_ATTACHMENTS, type Message } from '../contract/process.js';
import type { ExternalReference } from '../contract/shared.js';
import type { StagecoachClient } from './index.js';

/** mimeType by file extension; files with other extensions are refused before anything is sent. */
export const MIME_TYPES: Readonly<Record<string, string>> = {
  '.xml': 'application/xml',
  '.pdf': 'application/pdf',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.json': 'application/json',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.odt': 'application/vnd.oasis.opendocument.text',
};

/** The definition code lodging uses when none is given and several LoanOrigination ones exist. */
export const DEFAULT_DEFINITION_CODE = 'CleanOrder';

export interface Party {
  id: string;
  type: string;
}

export interface LodgeOptions {
  /** Definition code (= message type); default: the LoanOrigination definition (CleanOrder if several). */
  definitionCode?: string;
  externalReferences?: ExternalReference[];
  /** Primary entity of the application; default the broker itself. */
  stakeholder?: Party;
  recipient?: Party;
  sender?: Party;
  /** Message id; default a new UUID. */
  messageId?: string;
  signal?: AbortSignal;
  /** Called after each upload. */
  onUpload?: (file: { fileName: string; mimeType: string; size: number }) => void;
}

export interface LodgeReport {
  definition: { referenceId: string; code: string };
  processReferenceId: string;
  message: Message;
  uploaded: Array<{ fileName: string; mimeType: string; size: number }>;
}

/**
 * @example
 *   const report = await lodgeFolder(client, 'samples/lodging', { externalReferences: [{ origin: 'crm', referenceId: 'A-17' }] });
 *   report.message.status // 'Sent'
 */
export async function lodgeFolder(client: StagecoachClient, folder: string, options: LodgeOptions = {}): Promise<LodgeReport> {
  const files = await listFiles(folder);
  const signal = options.signal ? { signal: options.signal } : {};
  const definition = await pickDefinition(client, options.definitionCode, options.signal);
  const broker: Party = { id: client.options.brokerKey, type: 'broker' };
  const { referenceId: processReferenceId } = await client.processes.create(
    { processDefinitionReferenceId: definition.referenceId, externalReferences: options.externalReferences ?? [] },
    signal,
  );
  const messageId = options.messageId ?? randomUUID();
  await client.lodging.createMessage(
    processReferenceId,
    messageId,
    {
      messageType: definition.code,
      stakeholder: options.stakeholder ?? broker,
      recipient: options.recipient ?? broker,
      sender: options.sender ?? broker,
    },
    signal,
  );
  const uploaded: LodgeReport['uploaded'] = [];
  for (const f of files) {
    const content = await fsp.readFile(join(folder, f.fileName));
    await client.lodging.uploadAttachment(processReferenceId, messageId, f.fileName, content, f.mimeType, signal);
    const done = { fileName: f.fileName, mimeType: f.mimeType, size: content.length };
    uploaded.push(done);
    options.onUpload?.(done);
  }
  const message = await client.lodging.send(processReferenceId, messageId, signal);
  return { definition: { referenceId: definition.referenceId, code: definition.code }, processReferenceId, message, uploaded };
}

/** The files to upload, required ones first, then by name; refuses unknown extensions up front. */
export async function listFiles(folder: string): Promise<Array<{ fileName: string; mimeType: string }>> {
  let entries: import('node:fs').Dirent[];
  try {
    entries = await fsp.readdir(folder, { withFileTypes: true });
  } catch (err) {
    throw new StagecoachError('CONFIG_INVALID', `${folder}: cannot read the folder to lodge: ${(err as Error).message}`, { file: folder });
  }
  const names = entries.filter((e) => e.isFile() && !e.name.startsWith('.')).map((e) => e.name);
  const unknown = names.filter((n) => !MIME_TYPES[extname(n).toLowerCase()]);
  if (unknown.length) {
    throw new StagecoachError(
      'CONFIG_INVALID',
      `${folder}: no mimeType known for ${unknown.join(', ')}; expected one of the extensions ${Object.keys(MIME_TYPES).join(' ')}`,
      { file: folder },
    );
  }
  if (names.length === 0) throw new StagecoachError('CONFIG_INVALID', `${folder}: no files to lodge`, { file: folder });
  const rank = (n: string) => {
    const i = (REQUIRED_ATTACHMENTS as readonly string[]).indexOf(n);
    return i < 0 ? REQUIRED_ATTACHMENTS.length : i;
  };
  return names
    .sort((a, b) => rank(a) - rank(b) || a.localeCompare(b))
    .map((fileName) => ({ fileName, mimeType: MIME_TYPES[extname(fileName).toLowerCase()]! }));
}

export async function pickDefinition(client: StagecoachClient, code: string | undefined, signal?: AbortSignal) {
  const defs = await client.processes.definitions({
    types: ['LoanOrigination'],
    ...(code ? { codes: [code] } : {}),
    ...(signal ? { signal } : {}),
  });
  const usable = defs.filter((d) => d.isActive !== false && (!code || d.code === code));
  if (code) {
    const found = usable[0];
    if (!found)
      throw new StagecoachError(
        'UNKNOWN_PROCESS_DEFINITION',
        `no active LoanOrigination process definition with code ${code}; the service has ${defs.map((d) => d.code).join(', ') || 'none with that code'}`,
        { value: code },
      );
    return found;
  }
  if (usable.length === 1) return usable[0]!;
  const preferred = usable.find((d) => d.code === DEFAULT_DEFINITION_CODE);
  if (preferred) return preferred;
  throw new StagecoachError(
    'UNKNOWN_PROCESS_DEFINITION',
    `${usable.length ? `several LoanOrigination definitions (${usable.map((d) => d.code).join(', ')})` : 'no active LoanOrigination definition'}; choose one with --definition-code`,
  );
}
