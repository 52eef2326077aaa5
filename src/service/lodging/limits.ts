/**
 * The named bounds of lodging (the spec leaves them "not shown"; docs/lodging.md). Every
 * multipart upload is parsed with these busboy limits, whose defaults are Infinity.
 */
export const LODGING_LIMITS = {
  /** Largest attachment, in bytes (10 MiB): more is 413 ATTACHMENT_TOO_LARGE. */
  maxAttachmentBytes: 10 * 1024 * 1024,
  /** Attachments per message: one more (a new name) is 409 TOO_MANY_ATTACHMENTS. */
  maxAttachmentsPerMessage: 50,
  /** Longest attachment file name, in characters. */
  maxFileNameLength: 255,
  /** Multipart: one file part (`content`) per request. */
  files: 1,
  /** Multipart: text fields per request (`mimeType`, and room for one more a client may add). */
  fields: 2,
  /** Multipart: parts in all (files + fields). */
  parts: 3,
  /** Multipart: bytes of one text field value (a MIME type is short). */
  fieldSize: 1024,
  /** Multipart: bytes of a field name. */
  fieldNameSize: 100,
  /** Multipart: header lines of one part. */
  headerPairs: 20,
  /** Schema errors listed in one problem body (the rest are counted in its detail). */
  maxListedErrors: 50,
} as const;
