/**
 * Excel serial dates as ISO text, and which number formats make a number a date. A workbook
 * stores a date as a number of days (its fraction the time of day) counted in one of two
 * systems its workbook part declares (`<workbookPr date1904="1"/>`): from 1900-01-01 as day 1,
 * or from 1904-01-01 as day 0. The 1900 system counts 29 February 1900, a day that never was
 * (Lotus 1-2-3's leap-year bug, kept by Excel): serial 60 is that day and is no date, and the
 * serials before it are one day later than a plain count from 1899-12-30 makes them.
 */

/** How a date-formatted number reads: ISO text, or why it is no date. */
export type SerialReading = { iso: string } | { refused: string };

const DAY = 86_400;
/** 9999-12-31, the last day Excel shows, in the 1900 system. */
const LAST_SERIAL_1900 = 2_958_465;
const two = (n: number) => String(n).padStart(2, '0');

function isoOf(epochDays: number, seconds: number, timeOnly: boolean): string {
  const d = new Date((epochDays * DAY + seconds) * 1000);
  const time = `${two(d.getUTCHours())}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}`;
  if (timeOnly) return time;
  const day = `${String(d.getUTCFullYear()).padStart(4, '0')}-${two(d.getUTCMonth() + 1)}-${two(d.getUTCDate())}`;
  return seconds === 0 ? day : `${day}T${time}`;
}

/**
 * A serial in a date format as ISO text: `yyyy-mm-dd`, with `Thh:mm:ss` when it has a time of
 * day (to the nearest second); a time-only format's serial below 1 (no day) as `hh:mm:ss`.
 * @example serialToIso(29_358, false, false) // { iso: '1980-05-17' }
 * @example serialToIso(60, false, false)     // { refused: '… 29 February 1900 …' }
 */
export function serialToIso(serial: number, date1904: boolean, timeOnly: boolean): SerialReading {
  if (!Number.isFinite(serial) || serial < 0)
    return { refused: `the number ${serial} in a date format, which is no date (Excel shows ####)` };
  const total = Math.round(serial * DAY);
  const days = Math.floor(total / DAY);
  const seconds = total - days * DAY;
  // Days since 1970-01-01 of the serial's day.
  const epoch1900 = -25_569; // 1899-12-30 as days since 1970-01-01
  const epoch1904 = -24_107; // 1904-01-01
  // A time-only format shows no day: its time of day is the value (day 0 or not, as Excel shows it).
  if (timeOnly && days === 0) return { iso: isoOf(0, seconds, true) };
  if (date1904) {
    if (days > LAST_SERIAL_1900 - 1462) return { refused: `the serial ${serial} (1904 system), past 9999-12-31, the last day Excel shows` };
    return { iso: isoOf(epoch1904 + days, seconds, false) };
  }
  if (days > LAST_SERIAL_1900) return { refused: `the serial ${serial}, past 9999-12-31, the last day Excel shows` };
  if (days === 0) return { refused: `the serial ${serial}, day 0 of the 1900 system (Excel shows 1900-01-00), which is no date` };
  if (days === 60) return { refused: `the serial ${serial}, Excel's 29 February 1900, a day that does not exist` };
  return { iso: isoOf(epoch1900 + days + (days < 60 ? 1 : 0), seconds, false) };
}

/** The built-in number formats (numFmtId below 164) that show a date or a time (ECMA-376 §18.8.30). */
const BUILT_IN_DATES = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56, 57, 58,
]);
/** Of those, the ones that show a time of day only. */
const BUILT_IN_TIMES = new Set([18, 19, 20, 21, 45, 46, 47]);

/** What a number format makes of a number: a date (or date and time), a time of day only, or a number. */
export type FormatKind = 'date' | 'time' | 'number';

/**
 * Whether a number format shows a date: its first section, its quoted text, escaped characters,
 * colours and conditions left out, holds a day, month, year, hour or second code.
 * @example formatKind(0, 'dd/mm/yyyy') // 'date'
 * @example formatKind(0, '#,##0.00 "dd"') // 'number'
 */
export function formatKind(id: number, code: string | undefined): FormatKind {
  if (code === undefined) return BUILT_IN_TIMES.has(id) ? 'time' : BUILT_IN_DATES.has(id) ? 'date' : 'number';
  const first = code.split(/;(?=(?:[^"]*"[^"]*")*[^"]*$)/)[0] ?? '';
  const bare = first
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/_./g, '')
    .replace(/\*./g, '')
    .replace(/\[(?![hms]+\])[^\]]*\]/gi, '');
  if (/[dy]/i.test(bare)) return 'date';
  if (/[hs]/i.test(bare)) return 'time';
  return /m/i.test(bare) && !/[0#?]/.test(bare) ? 'date' : 'number';
}
