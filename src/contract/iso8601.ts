/**
 * The one reader of ISO 8601 date-times the client uses for every timestamp the platform sends.
 * The specification says "ISO 8601" and the embedded service writes the RFC 3339 profile
 * (`2026-01-02T03:04:05.123Z`), but a platform may write any form ISO 8601 allows: the basic
 * format (`20260102T030405Z`), a comma before the decimals (`03:04:05,123Z`), an offset without
 * a colon (`+0100`) or of hours only (`+01`), a lower-case `t`/`z`. Each is read exactly and
 * rewritten in the extended form with the same instant, digits and offset, so that everything
 * after the reader sees one form. A time without a zone (local time: which instant is unknown),
 * a week or ordinal date, or a field out of range is refused, never guessed.
 */

const FORM = /^(\d{4})(-?)(\d{2})\2(\d{2})[Tt ](\d{2})(:?)(\d{2})(?:\6(\d{2})(?:[.,](\d{1,9}))?)?(?:([Zz])|([+-])(\d{2})(?::?(\d{2}))?)$/;

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/**
 * The date-time in the extended form, or undefined when the text is not an ISO 8601 date-time
 * with a zone.
 * @example readIsoDateTime('20260102T030405Z') // '2026-01-02T03:04:05Z'
 * @example readIsoDateTime('2026-01-02T03:04:05,123+0100') // '2026-01-02T03:04:05.123+01:00'
 */
export function readIsoDateTime(text: string): string | undefined {
  const m = FORM.exec(text.trim());
  if (!m) return undefined;
  const [, year, , month, day, hour, , minute, second = '00', fraction, zulu, sign, offH, offM = '00'] = m;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const leap = (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
  if (mo < 1 || mo > 12 || d < 1 || d > DAYS_IN_MONTH[mo - 1]! || (mo === 2 && d === 29 && !leap)) return undefined;
  // 60 seconds: a leap second, which ISO 8601 allows.
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined;
  if (offH !== undefined && (Number(offH) > 23 || Number(offM) > 59)) return undefined;
  const zone = zulu ? 'Z' : `${sign}${offH}:${offM}`;
  return `${year}-${month}-${day}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${zone}`;
}
