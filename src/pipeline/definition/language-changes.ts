/**
 * The registry of the pipeline language's changes of meaning: one entry per change, in the
 * order they came (language.ts says how they are used; docs/pipelines.md how to add one). An
 * entry finds, in a file written for a version before `since`, each place whose meaning changed,
 * says what it meant and how to say that now, and gives the text that keeps it where one exists.
 */
import { type Document, isMap, isScalar, isSeq, type Node, type YAMLMap } from 'yaml';
import { type ChangeSite, flowText, type MeaningChange, nodeRange, transformSteps } from './language.js';

/** A phone step's options as plain data (`{}` for the bare `phone`). */
function phoneOptions(options: Node | null): Record<string, unknown> {
  return isMap(options) ? (options.toJSON() as Record<string, unknown>) : {};
}

/** A phone step rewritten with `add` among its options. */
function phoneKeep(item: Node, options: Node | null, add: Record<string, unknown>): ChangeSite['keep'] {
  return { range: nodeRange(item), text: flowText({ phone: { ...phoneOptions(options), ...add } }) };
}

/** Language 2 (0.1.0): `phone` without a region no longer reads national numbers as Dutch. */
const phoneRegion: MeaningChange = {
  id: 'phone-region',
  since: 2,
  file: 'mapping',
  summary: '`phone` without `region` (or `country`) reads only international numbers; language 1 read national numbers as Dutch (NL)',
  find: (doc) =>
    transformSteps(doc)
      .filter((s) => s.name === 'phone' && (s.options === null || isMap(s.options)))
      .filter((s) => !isMap(s.options) || (!s.options.has('region') && !s.options.has('country')))
      .map((s) => ({
        node: s.item,
        was: 'phone without a region: language 1 read a national number as Dutch, language 2 reads only international numbers and refuses national ones',
        fix: 'keep the Dutch reading with { phone: { region: NL } }',
        keep: phoneKeep(s.item, s.options, { region: 'NL' }),
      })),
};

/** Language 2 (0.1.0): a phone number must be of a range its region issues, not only of a length. */
const phoneValidity: MeaningChange = {
  id: 'phone-validity',
  since: 2,
  file: 'mapping',
  summary:
    'a phone number must be of a range its region issues (`check: valid`, the default); language 1 held it to a length only (`check: possible` is the nearest)',
  find: (doc) =>
    transformSteps(doc)
      .filter((s) => s.name === 'phone' && (s.options === null || isMap(s.options)) && !(isMap(s.options) && s.options.has('check')))
      .map((s) => ({
        node: s.item,
        was: 'phone without check: language 1 held a number to its length (Dutch 0 + 9 digits, others 6 to 12), language 2 to the ranges its region issues',
        fix: 'keep a length check with { phone: { …, check: possible } } (the lengths of the region’s numbering plan), or state check: valid',
        keep: phoneKeep(s.item, s.options, { check: 'possible' }),
      })),
};

/** Language 2 (0.1.0): the number transform's separators are stated, no longer Dutch by default. */
const numberSeparators: MeaningChange = {
  id: 'number-separators',
  since: 2,
  file: 'mapping',
  summary: '`number` needs `decimal` and `thousands` stated; language 1 defaulted them to Dutch (decimal `,`, thousands `.`)',
  find: (doc) =>
    transformSteps(doc)
      .filter((s) => s.name === 'number' && isMap(s.options) && (!s.options.has('decimal') || !s.options.has('thousands')))
      .map((s) => {
        const stated = (s.options as Node).toJSON() as Record<string, unknown>;
        return {
          node: s.item,
          was: 'number without decimal or thousands: language 1 read them as Dutch (decimal ",", thousands "."), language 2 refuses the mapping',
          fix: "state both, e.g. { number: { decimal: ',', thousands: '.' } }",
          keep: { range: nodeRange(s.options as Node), text: flowText({ decimal: ',', thousands: '.', ...stated }) },
        };
      }),
};

/** A date format's reading order, whatever its digits: `dd-mm-yyyy` and `d-m-yyyy` read alike. */
const dateReading = (format: string): string => format.replace(/(?<![dm])(dd|mm)(?![dm])/g, (t) => t[0]!);

/** Whether two of the formats can read one value as different dates: the same separators, another order. */
function canDisagree(formats: string[]): boolean {
  const readings = new Map<string, Set<string>>();
  for (const f of formats) {
    const separators = f.replace(/[dmy]/g, '');
    readings.set(separators, (readings.get(separators) ?? new Set()).add(dateReading(f)));
  }
  return [...readings.values()].some((r) => r.size > 1);
}

/** Language 2 (0.1.0): two date formats reading a value differently no longer mean the first. */
const dateFirstFormat: MeaningChange = {
  id: 'date-first-format',
  since: 2,
  file: 'mapping',
  summary:
    'a value two listed date formats read as different dates is refused as ambiguous unless `prefer` says which wins; language 1 took the first format that matched',
  find: (doc) =>
    transformSteps(doc).flatMap((s) => {
      if (s.name !== 'date') return [];
      const list = isSeq(s.options) ? s.options : isMap(s.options) && !s.options.has('prefer') ? s.options.get('formats', true) : undefined;
      if (!isSeq(list)) return [];
      const formats = list.items.filter(isScalar).map((f) => String(f.value));
      if (!canDisagree(formats)) return [];
      const was = `date formats ${formats.join(', ')} read some values as different dates: language 1 took the first that matched, language 2 refuses them as ambiguous`;
      // With two formats, prefer the first is language 1's reading; with more, which one matched first depends on the value.
      if (formats.length > 2) return [{ node: s.item, was, fix: 'say which format wins with { date: { formats: […], prefer: … } }' }];
      const options = isMap(s.options) ? (s.options.toJSON() as Record<string, unknown>) : { formats };
      return [
        {
          node: s.item,
          was,
          fix: `keep the first with { date: { formats: [${formats.join(', ')}], prefer: ${formats[0]} } }`,
          keep: { range: nodeRange(s.options as Node), text: flowText({ ...options, prefer: formats[0] }) },
        },
      ];
    }),
};

/** The pipeline's sources of one of `formats`, each with its `format` value's node. */
function sourcesOf(doc: Document, formats: readonly string[]): { source: YAMLMap; format: Node }[] {
  const sources = isMap(doc.contents) ? doc.contents.get('sources', true) : undefined;
  if (!isSeq(sources)) return [];
  return sources.items.flatMap((item) => {
    if (!isMap(item)) return [];
    const format = item.get('format', true);
    return isScalar(format) && formats.includes(String(format.value)) ? [{ source: item, format: format as Node }] : [];
  });
}

/** Language 2 (0.1.0): a stray quote inside a CSV field refuses the row instead of being read as text. */
const csvStrayQuotes: MeaningChange = {
  id: 'csv-stray-quotes',
  since: 2,
  file: 'pipeline',
  summary:
    'a stray quote inside a CSV field (`"ab"cd`, `Sn"1`) refuses the row at its line; language 1 read it as text (`csv: { quotes: relaxed }` reads it, flagged)',
  find: (doc) =>
    sourcesOf(doc, ['csv']).flatMap(({ source, format }) => {
      const csv = source.get('csv', true);
      if (isMap(csv) && csv.has('quotes')) return [];
      const was = 'CSV source: language 1 read a stray quote inside a field as text, language 2 refuses the row with the column named';
      const fix = 'keep reading such fields (each row now flagged in the report) with csv: { …, quotes: relaxed }';
      if (!isMap(csv)) return [{ node: format, was, fix }];
      return [
        {
          node: format,
          was,
          fix,
          keep: { range: nodeRange(csv), text: flowText({ ...(csv.toJSON() as Record<string, unknown>), quotes: 'relaxed' }) },
        },
      ];
    }),
};

/** Language 2 (0.1.0): a key repeated in one JSON object refuses the row instead of the last one winning. */
const jsonRepeatedKeys: MeaningChange = {
  id: 'json-repeated-keys',
  since: 2,
  file: 'pipeline',
  summary:
    'a key repeated in one JSON or JSON Lines object refuses the row at its line, naming the key; language 1 let the last one win silently',
  find: (doc) =>
    sourcesOf(doc, ['json', 'jsonl']).map(({ format }) => ({
      node: format,
      was: 'JSON source: language 1 let the last of a repeated key win silently, language 2 refuses the row naming the key',
      fix: 'no statement keeps a silent choice between two values: state language: 2 once the export has no repeated keys (plan lists them)',
    })),
};

/** Language 2 (0.1.0): workbook cells read whole; cells without a value refuse their row. */
const xlsxWholeCells: MeaningChange = {
  id: 'xlsx-whole-cells',
  since: 2,
  file: 'pipeline',
  summary:
    "a workbook's rich text is read with all its runs, the 1904 date system is honoured, and a formula without a cached value, a missing shared string, an error cell or serial 60 refuses the row; language 1 kept the last run and read the others as empty or as 1900-02-28",
  find: (doc) =>
    sourcesOf(doc, ['xlsx']).map(({ format }) => ({
      node: format,
      was: 'Excel source: language 1 kept only the last run of rich text and read formulas without a cached value, missing shared strings and error cells as empty; language 2 reads every cell whole and refuses those rows naming file:Sheet!cell',
      fix: 'no statement keeps the lost text: state language: 2 (plan shows the rows it now refuses)',
    })),
};

/** Every change of meaning, oldest first. Add one entry per change (docs/pipelines.md, "Language versions"). */
export const MEANING_CHANGES: readonly MeaningChange[] = [
  phoneRegion,
  phoneValidity,
  numberSeparators,
  dateFirstFormat,
  csvStrayQuotes,
  jsonRepeatedKeys,
  xlsxWholeCells,
];
