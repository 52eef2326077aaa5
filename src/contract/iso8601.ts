/**
 * The one reader of ISO 8601 dates and date-times the client uses for every date and timestamp
 * the platform sends. The specification says "ISO 8601" and the embedded service writes the RFC
 * 3339 profile (`2026-01-02T03:04:05.123Z`), but a platform may write any form ISO 8601 allows:
 * the basic format (`20260102T030405Z`), an ordinal date (`2026-002`, `2026002`), a week date
 * (`2026-W01-5`, `2026W015`), a comma before the decimals (`03:04:05,123Z`), an offset without a
 * colon (`+0100`) or of hours only (`+01`), a lower-case `t`/`z`. Each is read exactly and
 * rewritten in the extended calendar form with the same instant, digits and offset, so that
 * everything after the reader sees one form. A time without a zone (local time: which instant is
 * unknown) or a field out of range is refused, never guessed.
 */

/** The date part in any of its three ISO 8601 forms, basic or extended (group 2: the separator, used alike throughout). */
const DATE_PART = String.raw`(\d{4})(-?)(?:(\d{2})\2(\d{2})|(\d{3})|W(\d{2})\2?([1-7]))`;
const DATE = new RegExp(`^${DATE_PART}$`);
const FORM = new RegExp(
  `^${DATE_PART}[Tt ](\\d{2})(:?)(\\d{2})(?:\\9(\\d{2})(?:[.,](\\d{1,9}))?)?(?:([Zz])|([+-])(\\d{2})(?::?(\\d{2}))?)$`,
);

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

const leapYear = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/**
 * The calendar date (`YYYY-MM-DD`) of a date part matched by DATE_PART, or undefined when a
 * field is out of range (a 30 February, a day 367, a week 53 of a year that has 52).
 */
function calendarDate(m: RegExpExecArray): string | undefined {
  const [, year, , month, day, ordinal, week, weekday] = m;
  const y = Number(year);
  if (month !== undefined) {
    const mo = Number(month);
    const d = Number(day);
    if (mo < 1 || mo > 12 || d < 1 || d > DAYS_IN_MONTH[mo - 1]! || (mo === 2 && d === 29 && !leapYear(y))) return undefined;
    return `${year}-${month}-${day}`;
  }
  let utc: number;
  if (ordinal !== undefined) {
    const n = Number(ordinal);
    if (n < 1 || n > (leapYear(y) ? 366 : 365)) return undefined;
    utc = Date.UTC(y, 0, n);
  } else {
    // Week 1 is the week with the year's first Thursday, that is the week of 4 January.
    const w = Number(week);
    const jan4 = Date.UTC(y, 0, 4);
    const mondayOfWeek1 = jan4 - ((new Date(jan4).getUTCDay() + 6) % 7) * 86_400_000;
    // A year has 53 weeks when it starts on a Thursday, or is a leap year starting on a Wednesday.
    const jan1 = new Date(Date.UTC(y, 0, 1)).getUTCDay();
    const weeks = jan1 === 4 || (leapYear(y) && jan1 === 3) ? 53 : 52;
    if (w < 1 || w > weeks) return undefined;
    utc = mondayOfWeek1 + ((w - 1) * 7 + Number(weekday) - 1) * 86_400_000;
  }
  const date = new Date(utc);
  if (date.getUTCFullYear() < 0 || date.getUTCFullYear() > 9999) return undefined;
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}

/**
 * The date-time in the extended form, or undefined when the text is not an ISO 8601 date-time
 * with a zone.
 * @example readIsoDateTime('20260102T030405Z') // '2026-01-02T03:04:05Z'
 * @example readIsoDateTime('2026-01-02T03:04:05,123+0100') // '2026-01-02T03:04:05.123+01:00'
 * @example readIsoDateTime('2026-333T04:10:54.950Z') // '2026-11-29T04:10:54.950Z'
 * @example readIsoDateTime('2026-W48-7T04:10:54.950Z') // '2026-11-29T04:10:54.950Z'
 */
export function readIsoDateTime(text: string): string | undefined {
  const m = FORM.exec(text.trim());
  if (!m) return undefined;
  const date = calendarDate(m);
  if (date === undefined) return undefined;
  const [hour, , minute, second = '00', fraction, zulu, sign, offH, offM = '00'] = m.slice(8);
  // 60 seconds: a leap second, which ISO 8601 allows.
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 60) return undefined;
  if (offH !== undefined && (Number(offH) > 23 || Number(offM) > 59)) return undefined;
  const zone = zulu ? 'Z' : `${sign}${offH}:${offM}`;
  return `${date}T${hour}:${minute}:${second}${fraction ? `.${fraction}` : ''}${zone}`;
}

/**
 * A calendar date (no time) in any ISO 8601 form, as `YYYY-MM-DD`; undefined when the text is
 * no such date.
 * @example readIsoDate('19900505') // '1990-05-05'
 * @example readIsoDate('1990-125') // '1990-05-05'
 * @example readIsoDate('1990-W18-6') // '1990-05-05'
 */
export function readIsoDate(text: string): string | undefined {
  const m = DATE.exec(text.trim());
  return m ? calendarDate(m) : undefined;
}

/**
 * A calendar date (`YYYY-MM-DD`) in another ISO 8601 form: the inverse of readIsoDate, for the
 * embedded service's dialects and the tests' generators.
 * @example writeIsoDate('1990-05-05', 'basic')   // '19900505'
 * @example writeIsoDate('1990-05-05', 'ordinal') // '1990-125'
 * @example writeIsoDate('1990-05-05', 'week')    // '1990-W18-6'
 */
export function writeIsoDate(date: string, form: 'extended' | 'basic' | 'ordinal' | 'week', basic = false): string {
  const [y, mo, d] = date.split('-').map(Number) as [number, number, number];
  const sep = basic ? '' : '-';
  const year = pad(y, 4);
  if (form === 'extended') return `${year}-${pad(mo)}-${pad(d)}`;
  if (form === 'basic') return `${year}${pad(mo)}${pad(d)}`;
  const utc = Date.UTC(y, mo - 1, d);
  if (form === 'ordinal') return `${year}${sep}${pad((utc - Date.UTC(y, 0, 1)) / 86_400_000 + 1, 3)}`;
  // The week-numbering year is the one of the week's Thursday.
  const weekday = ((new Date(utc).getUTCDay() + 6) % 7) + 1;
  const thursday = new Date(utc + (4 - weekday) * 86_400_000);
  const wy = thursday.getUTCFullYear();
  const week = Math.floor((thursday.getTime() - Date.UTC(wy, 0, 1)) / 86_400_000 / 7) + 1;
  return `${pad(wy, 4)}${sep}W${pad(week)}${sep}${weekday}`;
}
