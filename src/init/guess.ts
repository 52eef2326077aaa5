/**
 * Guessing the target mapping of one export from its column profiles: which column is the
 * legacy key, which staged-counterparty field each column feeds (the header dictionary, checked
 * against what the values look like), the transforms the values need (date formats, decimal
 * commas, Dutch postcodes), and value maps for code columns. Every guess carries its reason,
 * written as a comment next to it; every required field it cannot place becomes a TODO. Pure.
 */
import { COUNTRY_CODES, FREQUENCY_CODES, lookupCode, type Role, roleOf, SEX_CODES } from './dictionary.js';
import { type ColumnProfile, dateFormatsOf, dateShare, type FileProfile, shareOf } from './profile.js';

/** A YAML value as the generator writes it (flow style). */
export type Y = string | number | boolean | null | Y[] | { [k: string]: Y };

/** One field of the mapping's record, with why it is mapped so. */
export interface GuessedField {
  name: string;
  value: Y;
  why?: string;
}

export interface GuessedMapping {
  type: 'person' | 'organisation';
  keyColumn: string | undefined;
  scope: string;
  keyTransforms: Y[];
  fields: GuessedField[];
  codes: Record<string, Record<string, string | null>>;
  /** Required fields it could not place, and other decisions left to the user. */
  todos: string[];
  /** Why the key and the type are what they are. */
  notes: string[];
  /** Columns no field reads. */
  unmapped: string[];
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const num = (n: number) => n.toLocaleString('en-US');

/**
 * @example guessMapping('klanten', profile, {}).fields.map((f) => f.name) // ['isActive', 'initials', 'surname', …]
 */
export function guessMapping(sourceName: string, profile: FileProfile, context: { personScope?: string } = {}): GuessedMapping {
  const byRole = new Map<Role, ColumnProfile>();
  const used = new Set<string>();
  for (const c of profile.columns) {
    if (c.arrayOfObjects !== undefined) continue;
    const role = roleOf(c.name);
    if (role && !byRole.has(role) && c.values - c.empty > 0) byRole.set(role, c);
  }
  const isOrg = byRole.has('organisationName') || byRole.has('cocNumber');
  const type = isOrg ? 'organisation' : 'person';
  const todos: string[] = [];
  const notes: string[] = [`type ${type}: ${isOrg ? 'a company name or KvK column' : 'person columns (names, birth date)'} found`];
  const fields: GuessedField[] = [];
  const codes: GuessedMapping['codes'] = {};
  const take = (role: Role): ColumnProfile | undefined => {
    const c = byRole.get(role);
    if (c) used.add(c.name);
    return c;
  };
  const filled = (c: ColumnProfile) => `${pct((c.values - c.empty) / Math.max(1, c.values))} filled`;

  // The legacy key: a key-named column that is unique and never empty; else the KvK number; else any unique column.
  const uniques = profile.columns.filter((c) => c.unique === true);
  const named = byRole.get('key');
  let key: ColumnProfile | undefined;
  const uniqueness = (c: ColumnProfile) =>
    c.duplicates + c.empty === 0
      ? `unique and never empty over ${num(profile.rows)} rows`
      : `unique over ${num(profile.rows)} rows but for ${c.duplicates} repeated and ${c.empty} empty value(s), which plan rejects`;
  if (isOrg && byRole.get('cocNumber')?.unique) {
    // An organisation is its KvK number: two rows with one number are one company, which the
    // platform refuses twice over (a duplicate identity), so the number is the key that lets the
    // first row stage and names the second as a duplicate.
    key = byRole.get('cocNumber');
    notes.push(`key ${key!.name}: the KvK number (one company, one number), ${uniqueness(key!)}`);
  } else if (named?.unique) {
    key = named;
    notes.push(`key ${named.name}: named like a key, ${uniqueness(named)}`);
  } else if (uniques[0]) {
    key = uniques[0];
    notes.push(`key ${key.name}: the first column that is ${uniqueness(key)}`);
  } else {
    key = profile.columns.find((c) => c.arrayOfObjects === undefined);
    todos.push(
      `key: no column is unique and filled; ${key ? `${key.name} is written as a placeholder: ` : ''}choose the legacy key column (key.column)`,
    );
  }
  if (named && !named.unique && key !== named) notes.push(`${named.name} is named like a key but is not unique or has empty values`);
  if (key) used.add(key.name);
  const scope = sourceName;
  const keyTransforms: Y[] = key && shareOf(key, 'integer') < 1 ? ['trim'] : [];
  if (key && isOrg && key === byRole.get('cocNumber'))
    keyTransforms.splice(0, keyTransforms.length, { replace: { regex: '\\s+', with: '' } });

  const field = (name: string, value: Y, why?: string) => fields.push({ name, value, ...(why ? { why } : {}) });
  const col = (c: ColumnProfile, transforms: Y[], extra: Record<string, Y> = {}): Y => ({ column: c.name, transforms, ...extra });

  field('isActive', { value: true });
  const active = take('active');
  if (active && Object.keys(active.kinds).includes('boolean')) {
    fields.pop();
    field('isActive', col(active, [{ default: true }, 'boolean']), `${active.name}: yes/no values`);
  }

  if (type === 'person') {
    const initials = take('initials');
    const first = take('firstName');
    if (initials && first)
      field(
        'initials',
        { first: [col(initials, ['collapse-spaces', 'upper']), col(first, ['initials'])] },
        `${initials.name} (${filled(initials)}), else derived from ${first.name}`,
      );
    else if (initials)
      field('initials', col(initials, ['collapse-spaces', 'upper'], { required: true }), `${initials.name} (${filled(initials)})`);
    else if (first) field('initials', col(first, ['initials'], { required: true }), `derived from ${first.name}: no initials column`);
    else todos.push('initials (required): no initials or first-name column found');
    if (first) field('firstName', col(first, ['collapse-spaces', 'title']), `${first.name} (${filled(first)})`);
    const prefix = take('surnamePrefix');
    if (prefix) field('surnamePrefix', col(prefix, ['collapse-spaces', 'lower']), `${prefix.name} (${filled(prefix)})`);
    const surname = take('surname') ?? take('fullName');
    if (surname)
      field(
        'surname',
        col(surname, ['collapse-spaces'], { required: true }),
        byRole.get('surname')
          ? `${surname.name} (${filled(surname)})`
          : `${surname.name} holds the whole name: split it in a script if the platform needs the parts`,
      );
    else todos.push('surname (required): no surname column found');
    const sex = take('sex');
    if (sex) {
      const table = codeTable(sex, SEX_CODES);
      codes.sex = table.codes;
      field('sex', col(sex, ['trim', 'upper', { code: 'sex' }]), `${sex.name}: ${table.why}`);
      if (table.unknown.length > 0)
        todos.push(`sex: values ${table.unknown.join(', ')} of ${sex.name} are in no code list; add them to codes.sex`);
    }
    const dob = take('dateOfBirth');
    if (dob) {
      const formats = dateFormatsOf(dob);
      if (formats.length > 0)
        field(
          'dateOfBirth',
          col(dob, [{ date: formats }]),
          `${dob.name}: ${pct(dateShare(dob))} of its values are dates in ${formats.join(' or ')}`,
        );
      else todos.push(`dateOfBirth: ${dob.name} holds no values that read as dates; give its format ({ date: [dd-mm-yyyy] })`);
    }
    const nat = take('nationality');
    if (nat) {
      const table = codeTable(nat, COUNTRY_CODES);
      codes.land = { ...(codes.land ?? {}), ...table.codes };
      field('nationalities', [col(nat, ['trim', 'upper', { code: 'land' }])], `${nat.name}: ${table.why}`);
      if (table.unknown.length > 0)
        todos.push(`nationalities: values ${table.unknown.join(', ')} of ${nat.name} are not countries init knows; add them to codes.land`);
    }
  } else {
    const name = take('organisationName') ?? take('fullName');
    if (name) field('organisationName', col(name, ['collapse-spaces'], { required: true }), `${name.name} (${filled(name)})`);
    else todos.push('organisationName (required): no company-name column found');
    const coc = take('cocNumber');
    if (coc) {
      const eightDigits = profile.rows > 0 && shareOf(coc, 'integer') > 0.9 && coc.maxLength <= 9;
      field(
        'cocNumber',
        col(
          coc,
          [
            { replace: { regex: '\\s+', with: '' } },
            ...(eightDigits ? [{ pattern: { regex: '^\\d{8}$', message: 'not a KvK number, expected 8 digits' } }] : []),
          ],
          {
            required: true,
          },
        ),
        `${coc.name} (${filled(coc)})${eightDigits ? ': digits, checked as 8-digit KvK numbers' : ''}`,
      );
    } else todos.push('cocNumber (required): no KvK column found');
  }

  const country = take('country');
  const countryExpr: Y = country ? col(country, ['trim', 'upper', { code: 'land' }, { default: 'NL' }]) : { value: 'NL' };
  if (country) {
    const table = codeTable(country, COUNTRY_CODES);
    codes.land = { ...(codes.land ?? {}), ...table.codes };
    field(type === 'person' ? 'countryCode' : 'countryOfIncorporation', countryExpr, `${country.name}: ${table.why}; empty is NL`);
    if (type === 'organisation') field('countryCode', countryExpr);
  }
  const email = take('email');
  if (email) field('emailAddress', col(email, ['email']), `${email.name}: ${pct(shareOf(email, 'email'))} look like e-mail addresses`);

  const phones: Y[] = [];
  const phone = take('phone');
  const mobile = take('mobile');
  if (phone)
    phones.push({ object: { type: { value: type === 'person' ? 'home' : 'office' }, number: col(phone, [{ phone: { country: 'NL' } }]) } });
  if (mobile) phones.push({ object: { type: { value: 'mobile' }, number: col(mobile, [{ phone: { country: 'NL' } }]) } });
  if (phones.length > 0)
    field(
      'telephoneNumbers',
      phones,
      [phone, mobile]
        .filter(Boolean)
        .map((c) => c!.name)
        .join(' and '),
    );

  const street = take('street');
  const house = take('houseNumber');
  const addition = take('houseNumberAddition');
  const postcode = take('postalCode');
  const locality = take('locality');
  if (street || postcode || locality) {
    const address: Record<string, Y> = { referenceId: { referenceId: { suffix: 'address/main' } }, type: { value: 'main' } };
    const why: string[] = [];
    if (street) {
      const parts: Y[] = [
        col(street, ['collapse-spaces']),
        ...(house ? [col(house, ['collapse-spaces'])] : []),
        ...(addition ? [col(addition, ['collapse-spaces'])] : []),
      ];
      address.addressLine1 = parts.length > 1 ? { concat: parts } : parts[0]!;
      why.push(
        `street ${[street, house, addition]
          .filter(Boolean)
          .map((c) => c!.name)
          .join(' + ')}`,
      );
    } else todos.push('addresses[0].addressLine1 (required in an address): no street column found');
    if (house) address.houseNumber = col(house, ['collapse-spaces']);
    if (postcode) {
      const dutch = shareOf(postcode, 'postcode-nl');
      address.postalCode = col(postcode, dutch >= 0.9 ? ['postcode-nl'] : ['collapse-spaces', 'upper']);
      why.push(`postcode ${postcode.name} (${pct(dutch)} Dutch postcodes${dutch >= 0.9 ? ', checked as such' : ''})`);
    } else todos.push('addresses[0].postalCode (required in an address): no postcode column found');
    if (locality) address.locality = col(locality, ['collapse-spaces']);
    else todos.push('addresses[0].locality (required in an address): no place column found');
    address.countryCode = countryExpr;
    if (!country) why.push('no country column: NL assumed');
    field('addresses', [{ object: address }], why.join('; '));
  }

  const amount = take('incomeAmount');
  if (amount && type === 'person') {
    const comma = shareOf(amount, 'decimal-comma') >= shareOf(amount, 'decimal-dot');
    const freq = take('incomeFrequency');
    const frequency: Y = freq ? col(freq, ['trim', 'upper', { code: 'frequentie' }]) : { value: 'Monthly' };
    if (freq) {
      const table = codeTable(freq, FREQUENCY_CODES);
      codes.frequentie = table.codes;
      if (table.unknown.length > 0)
        todos.push(
          `income.frequency: values ${table.unknown.join(', ')} of ${freq.name} are no known frequency; add them to codes.frequentie`,
        );
    } else todos.push('income.frequency: no frequency column; Monthly is assumed, check it');
    field(
      'income',
      {
        when: { column: amount.name, notEmpty: true },
        object: {
          amount: col(amount, [{ number: comma ? { decimal: ',', thousands: '.' } : { decimal: '.', thousands: ',' } }]),
          currency: { value: 'EUR' },
          frequency,
        },
      },
      `${amount.name}: amounts with a decimal ${comma ? 'comma' : 'point'}; currency EUR assumed`,
    );
  }

  const relations: Y[] = [];
  const partner = take('partnerKey');
  if (partner && type === 'person')
    relations.push({
      when: { column: partner.name, notEmpty: true },
      object: { to: { referenceId: { column: partner.name } }, type: { value: 'isSignificantOtherOf' } },
    });
  const director = take('directorKey');
  if (director) {
    const target = context.personScope;
    if (target)
      relations.push({
        when: { column: director.name, notEmpty: true },
        object: { to: { referenceId: { column: director.name, scope: target } }, type: { value: 'isDirectorOf' } },
      });
    else todos.push(`relations: ${director.name} names a director, but no person export was given to point at; add its scope`);
  }
  if (relations.length > 0)
    field(
      'relations',
      relations,
      [partner, director]
        .filter(Boolean)
        .map((c) => `${c!.name} → a relation`)
        .join('; '),
    );

  for (const c of profile.columns)
    if (c.arrayOfObjects !== undefined)
      todos.push(
        `${c.name}: a list of up to ${c.arrayOfObjects} objects per record; map its first entry with ${c.name}.0.<field>, or every entry with a script`,
      );
  const unmapped = profile.columns
    .filter((c) => !used.has(c.name) && c.arrayOfObjects === undefined && !c.name.includes('.0.'))
    .map((c) => c.name);
  return { type, keyColumn: key?.name, scope, keyTransforms, fields, codes, todos, notes, unmapped };
}

/**
 * A code table for a column's distinct values from a known table of legacy codes, with the
 * values it could not place. A column with too many distinct values gets the whole known table.
 */
function codeTable(
  c: ColumnProfile,
  known: Readonly<Record<string, string>>,
): { codes: Record<string, string>; unknown: string[]; why: string } {
  if (!c.distinct) {
    const codes = Object.fromEntries(Object.entries(known));
    return { codes, unknown: [], why: 'many distinct values: the whole table of known codes' };
  }
  const codes: Record<string, string> = {};
  const unknown: string[] = [];
  for (const v of [...c.distinct.keys()].sort()) {
    const code = lookupCode(known, v);
    const upper = v.trim().toUpperCase();
    if (code) codes[upper] = code;
    else unknown.push(v);
  }
  const mapped = Object.entries(codes)
    .slice(0, 8)
    .map(([k, v]) => `${k}→${v}`)
    .join(', ');
  return { codes, unknown, why: `${c.distinct.size} distinct values (${mapped}${Object.keys(codes).length > 8 ? ', …' : ''})` };
}
