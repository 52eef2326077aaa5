/**
 * PUT /lodging/processes/{pid}/messages/{mid}/attachments/{file-name}: one attachment per
 * request, multipart/form-data with the file in `content` and its type in `mimeType`. Parsed
 * as a stream with explicit busboy limits (LODGING_LIMITS); the file is held in memory only up
 * to the size limit, because it must be complete to be sniffed, parsed and validated before it
 * is stored as a BLOB. Checks, in order: name (400), message is Draft (409), room for another
 * attachment (409), multipart shape and limits (400/413), declared type vs content and
 * extension (415), for XML: no DTD, well-formed, and for well-known names the XSD (422).
 * A new upload under an existing name replaces it while the message is Draft.
 */
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import multipart from '@fastify/multipart';
import type { ServiceContext } from '../context.js';
import { HttpProblem } from '../http/problem.js';
import { checkAttachmentName, isWellKnown } from './attachment-name.js';
import { checkContentType, isXmlMimeType } from './content-sniff.js';
import { LODGING_LIMITS } from './limits.js';
import { addressedMessage } from './lookup.js';
import { MESSAGE_PATH } from './route-messages.js';
import { attachmentExists, countAttachments, findMessage, putAttachment, type MessageRow } from './store-messages.js';
import { checkXmlAttachment } from './xml-validation.js';

const BUSBOY_LIMITS = {
  fileSize: LODGING_LIMITS.maxAttachmentBytes,
  files: LODGING_LIMITS.files,
  fields: LODGING_LIMITS.fields,
  parts: LODGING_LIMITS.parts,
  fieldSize: LODGING_LIMITS.fieldSize,
  fieldNameSize: LODGING_LIMITS.fieldNameSize,
  headerPairs: LODGING_LIMITS.headerPairs,
};

export async function attachmentsRoute(app: FastifyInstance, ctx: ServiceContext): Promise<void> {
  // Encapsulated, so multipart parsing exists only on this route.
  await app.register(async (scope) => {
    await scope.register(multipart, { limits: BUSBOY_LIMITS, throwFileSizeLimit: true });
    scope.put(`${MESSAGE_PATH}/attachments/*`, { config: { area: 'lodging' } }, async (request, reply) => {
      const { message } = addressedMessage(ctx, request);
      const fileName = (request.params as { '*': string })['*'];
      checkAttachmentName(fileName);
      checkRoomFor(ctx, message, fileName);
      if (!request.isMultipart()) {
        throw new HttpProblem(
          415,
          'UNSUPPORTED_MEDIA_TYPE',
          `an attachment is uploaded as multipart/form-data with the fields content (the file) and mimeType; got Content-Type ${request.headers['content-type'] ?? '(none)'}`,
        );
      }
      const upload = await readUpload(request);
      const mimeType = checkContentType(fileName, upload.mimeType, upload.content);
      if (isXmlMimeType(mimeType)) checkXmlAttachment(fileName, upload.content, isWellKnown(fileName));
      const sha256 = createHash('sha256').update(upload.content).digest('hex');
      ctx.db.transaction(() => {
        // The message may have been sent while the upload streamed in.
        checkRoomFor(ctx, findMessage(ctx.db, message.process_id, message.reference_id)!, fileName);
        putAttachment(ctx.db, message.process_id, message.reference_id, { fileName, mimeType, sha256, content: upload.content });
      })();
      return reply.code(204).send();
    });
  });
}

/** 409 when the message is no longer Draft, or when a new name would exceed the attachment limit. */
function checkRoomFor(ctx: ServiceContext, message: MessageRow, fileName: string): void {
  if (message.status !== 'Draft') {
    throw new HttpProblem(
      409,
      'MESSAGE_NOT_DRAFT',
      `message ${message.reference_id} is ${message.status}; attachments can only be uploaded while it is Draft`,
    );
  }
  if (
    !attachmentExists(ctx.db, message.process_id, message.reference_id, fileName) &&
    countAttachments(ctx.db, message.process_id, message.reference_id) >= LODGING_LIMITS.maxAttachmentsPerMessage
  ) {
    throw new HttpProblem(
      409,
      'TOO_MANY_ATTACHMENTS',
      `message ${message.reference_id} already has ${LODGING_LIMITS.maxAttachmentsPerMessage} attachments, the most a message may have; replace one by uploading under its name`,
    );
  }
}

/** Reads the `content` file and `mimeType` field; the file is bounded by the busboy limit. */
async function readUpload(request: FastifyRequest): Promise<{ content: Buffer; mimeType: string }> {
  let content: Buffer | undefined;
  let mimeType: string | undefined;
  try {
    for await (const part of request.parts({ limits: BUSBOY_LIMITS })) {
      if (part.type === 'file') {
        if (part.fieldname !== 'content') {
          part.file.resume();
          throw new HttpProblem(
            400,
            'INVALID_REQUEST',
            `unexpected file field ${JSON.stringify(part.fieldname)}; the file goes in the field content`,
            {
              errors: [{ field: part.fieldname, message: 'INVALID_FIELD_VALUE' }],
            },
          );
        }
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const chunk of part.file) {
          chunks.push(chunk as Buffer);
          size += (chunk as Buffer).length;
        }
        if (part.file.truncated) throw tooLarge();
        content = Buffer.concat(chunks, size);
      } else if (part.fieldname === 'mimeType') {
        if (part.valueTruncated)
          throw new HttpProblem(400, 'INVALID_REQUEST', `mimeType is longer than ${LODGING_LIMITS.fieldSize} bytes`, {
            errors: [{ field: 'mimeType', message: 'INVALID_FIELD_VALUE' }],
          });
        mimeType = String(part.value).trim();
      } else if (part.fieldname === 'content') {
        throw new HttpProblem(
          400,
          'INVALID_REQUEST',
          'content must be sent as a file part (with a filename in its Content-Disposition), not as a text field',
          {
            errors: [{ field: 'content', message: 'INVALID_FIELD_VALUE' }],
          },
        );
      }
      // Other text fields are ignored (within the fields limit).
    }
  } catch (err) {
    throw multipartProblem(err);
  }
  const missing = [...(content === undefined ? ['content'] : []), ...(mimeType ? [] : ['mimeType'])];
  if (missing.length > 0) {
    throw new HttpProblem(
      400,
      'INVALID_REQUEST',
      `the upload lacks ${missing.join(' and ')}; send multipart/form-data with the fields content (the file) and mimeType`,
      {
        errors: missing.map((field) => ({ field, message: 'MISSING_REQUIRED_FIELD' })),
      },
    );
  }
  if (content!.length === 0)
    throw new HttpProblem(400, 'INVALID_REQUEST', 'content is empty', { errors: [{ field: 'content', message: 'INVALID_FIELD_VALUE' }] });
  return { content: content!, mimeType: mimeType! };
}

const tooLarge = () =>
  new HttpProblem(
    413,
    'ATTACHMENT_TOO_LARGE',
    `the attachment exceeds ${LODGING_LIMITS.maxAttachmentBytes} bytes (${LODGING_LIMITS.maxAttachmentBytes / 1024 / 1024} MiB), the largest the service accepts`,
  );

/** Maps @fastify/multipart and busboy errors to problems. */
function multipartProblem(err: unknown): HttpProblem {
  if (err instanceof HttpProblem) return err;
  const code = (err as { code?: string }).code;
  switch (code) {
    case 'FST_REQ_FILE_TOO_LARGE':
      return tooLarge();
    case 'FST_FILES_LIMIT':
      return new HttpProblem(
        413,
        'TOO_MANY_PARTS',
        `one attachment per request: a multipart upload carries exactly one file part (content), at most ${LODGING_LIMITS.files}`,
      );
    case 'FST_FIELDS_LIMIT':
    case 'FST_PARTS_LIMIT':
      return new HttpProblem(
        413,
        'TOO_MANY_PARTS',
        `too many multipart parts: at most ${LODGING_LIMITS.parts} parts (the file content, the field mimeType and ${LODGING_LIMITS.fields - 1} other field)`,
      );
    default:
      return new HttpProblem(400, 'INVALID_REQUEST', `the multipart body cannot be read: ${(err as Error).message}`);
  }
}
