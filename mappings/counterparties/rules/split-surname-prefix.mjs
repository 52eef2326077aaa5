// Mapping escape hatch (see docs/mappings.md): a TypeScript/JavaScript rule for what the
// declaration cannot say. The legacy CRM let clerks type "van den Berg" into achternaam and
// leave tussenvoegsel empty; the platform wants the prefix apart. Runs after the declared
// fields are built: (row, record, helpers) => record.
const PREFIXES = ['van der', 'van den', 'van de', "van 't", 'van ’t', 'in het', 'op de', 'van', 'de', 'den', 'der', 'ter', 'ten', 'te', "'t"];

export default function splitSurnamePrefix(row, record) {
  if (record.surnamePrefix || typeof record.surname !== 'string') return record;
  const lower = record.surname.toLowerCase();
  for (const prefix of PREFIXES) {
    if (lower.startsWith(`${prefix} `) && record.surname.length > prefix.length + 1) {
      record.surnamePrefix = prefix;
      record.surname = record.surname.slice(prefix.length + 1);
      break;
    }
  }
  return record;
}
