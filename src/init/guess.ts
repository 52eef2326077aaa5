/**
 * Guessing the target mapping of one export from its column profiles: which column is the
 * legacy key, which staged-counterparty field each column feeds (the header dictionary, checked
 * against what the values look like), the transforms the values need (date formats, decimal
 * commas, Dutch postcodes), and value maps for code columns. Every guess carries its reason,
 * written as a comment next to it; every required field it cannot place becomes a TODO. Pure.
 */
import { FREQUENCY_CODES, lookupCode, programPrefix, type Role, roleMatch, SEX_CODES, STATUS_CODES } from './dictionary.js';
import { countryEvidence, decideAmount, decideDate, decidePhone, looksLikeCountries, type Y, valuesWithCounts } from './evidence.js';
import { periodOf } from './period-words.js';
import { type ColumnProfile, dateShare, type FileProfile, shareOf } from './profile.js';

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
  /** Columns no field reads, each with why. */
  unmapped: Array<{ column: string; reason: string }>;
}

const pct = (x: number) => `${Math.round(x * 100)}%`;
const num = (n: number) => n.toLocaleString('en-US');
const rowsOf = (n: number) => `${num(n)} row${n === 1 ? '' : 's'}`;

/**
 * @example guessMapping('klanten', profile, {}).fields.map((f) => f.name) // ['isActive', 'initials', 'surname', …]
 */
export function guessMapping(
  sourceName: string,
  profile: FileProfile,
  context: {
    personScope?: string;
    impliedDecimals?: Record<string, number>;
    /** A copybook's 88-level conditions per column: code tables, and the values that mean "not known". */
    conditions?: Record<string, Array<{ name: string; values: string[] }>>;
  } = {},
): GuessedMapping {
  const byRole = new Map<Role, ColumnProfile>();
  const used = new Set<string>();
  /** Why a column was not taken, for the list of unmapped columns. */
  const passed = new Map<string, string>();
  /** How a column's role was found, when not by its exact name. */
  const how = new Map<string, string>();
  // A program prefix on every name (`XX-DOB`, `CM-TOWN`) says nothing of the column: left out when names are read.
  const prefix = programPrefix(profile.columns.filter((c) => c.arrayOfObjects === undefined).map((c) => c.name));
  for (const c of profile.columns) {
    if (c.arrayOfObjects !== undefined) continue;
    const m = roleMatch(c.name, prefix);
    if (!m) continue;
    if (c.values - c.empty === 0) passed.set(c.name, `named like ${m.role} but empty in every row`);
    else if (m.role === 'email' && shareOf(c, 'email') < 0.5)
      passed.set(c.name, `named like an e-mail address but only ${pct(shareOf(c, 'email'))} of its values look like one`);
    else if (byRole.has(m.role)) passed.set(c.name, `a second ${m.role} column (${byRole.get(m.role)!.name} is mapped)`);
    else {
      byRole.set(m.role, c);
      if (m.how !== 'exact') how.set(c.name, `header ${m.how}`);
    }
  }
  // The values decide as much as the names: e-mail addresses, countries, Dutch postcodes,
  // phone numbers are recognised whatever their column is called.
  const free = profile.columns.filter((c) => c.arrayOfObjects === undefined && ![...byRole.values()].includes(c) && c.values > c.empty);
  const byValues = (role: Role, test: (c: ColumnProfile) => boolean, what: string) => {
    if (byRole.has(role)) return;
    const c = free.find((x) => ![...byRole.values()].includes(x) && test(x));
    if (c) {
      byRole.set(role, c);
      how.set(c.name, `its values: ${what}`);
      passed.delete(c.name);
    }
  };
  byValues('email', (c) => shareOf(c, 'email') >= 0.8, 'e-mail addresses');
  byValues('country', looksLikeCountries, 'country names or codes');
  byValues('postalCode', (c) => shareOf(c, 'postcode-nl') >= 0.9, 'Dutch postcodes');
  byValues('phone', (c) => shareOf(c, 'phone') >= 0.8, 'phone numbers (+, spaces, brackets, dashes)');
  // A column of dates is never taken as the birth date by its values alone: an account's opening
  // date looks the same, and a wrong birth date is worse than none (it is listed as unmapped).
  const isOrg = byRole.has('organisationName') || byRole.has('cocNumber');
  const type = isOrg ? 'organisation' : 'person';
  const todos: string[] = [];
  // Say which columns make it a person, or that none does (a notes sheet is no person source).
  const personColumns = (['surname', 'fullName', 'firstName', 'initials', 'dateOfBirth'] as const)
    .filter((r) => byRole.has(r))
    .map((r) => `${r} ${byRole.get(r)!.name}`);
  const notes: string[] = [
    `type ${type}: ${isOrg ? 'a company name or KvK column found' : personColumns.length > 0 ? `person columns found (${personColumns.join(', ')})` : 'no company-name or KvK column, and no person columns either'}`,
  ];
  if (prefix) notes.push(`the program prefix ${prefix} of the column names is left out when they are read`);
  const fields: GuessedField[] = [];
  const codes: GuessedMapping['codes'] = {};
  const take = (role: Role): ColumnProfile | undefined => {
    const c = byRole.get(role);
    if (c) used.add(c.name);
    return c;
  };
  const filled = (c: ColumnProfile) =>
    `${pct((c.values - c.empty) / Math.max(1, c.values))} filled${how.has(c.name) ? `; ${how.get(c.name)}` : ''}`;

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
  // Decomposed text (a Mac's export) is composed first, so `é` is staged as the platform compares it.
  const col = (c: ColumnProfile, transforms: Y[], extra: Record<string, Y> = {}): Y => ({
    column: c.name,
    transforms: c.decomposed > 0 ? ['nfc', ...transforms] : transforms,
    ...extra,
  });

  field('isActive', { value: true });
  const active = take('active');
  if (active && shareOf(active, 'boolean') >= 0.9) {
    fields.pop();
    field('isActive', col(active, [{ default: true }, 'boolean']), `${active.name}: yes/no values; empty is taken as active`);
  } else if (active) {
    fields.pop();
    const table = withConditions(codeTable(active, STATUS_CODES), context.conditions?.[active.name], active.name, (w) =>
      lookupCode(STATUS_CODES, w),
    );
    codes.status = table.codes;
    field(
      'isActive',
      col(active, ['trim', 'upper', { code: { table: 'status', unknown: 'empty' } }, 'boolean']),
      `${active.name} consumed as isActive: ${table.why}; a status in no list leaves isActive empty`,
    );
    if (table.unknown.length > 0)
      todos.push(
        `isActive: statuses ${valuesWithCounts(table.unknown)} of ${active.name} are neither active nor inactive to init; their rows get no isActive until you add them to codes.status (ACTIVE → "true")`,
      );
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
    const salutation = take('salutation');
    if (salutation) field('salutation', col(salutation, ['collapse-spaces']), `${salutation.name} (${filled(salutation)}), as written`);
    const sex = take('sex');
    if (sex) {
      const table = withConditions(codeTable(sex, SEX_CODES), context.conditions?.[sex.name], sex.name, (w) => lookupCode(SEX_CODES, w));
      codes.sex = table.codes;
      // A value init cannot place leaves sex empty on its rows (never a guess), until added to codes.sex.
      const code: Y = table.unknown.length > 0 ? { table: 'sex', unknown: 'empty' } : 'sex';
      field('sex', col(sex, ['trim', 'upper', { code }]), `${sex.name}: ${table.why}`);
      if (table.unknown.length > 0)
        todos.push(
          `sex: values ${valuesWithCounts(table.unknown)} of ${sex.name} are in no code list; their rows get no sex until you add them to codes.sex`,
        );
    }
    const dob = take('dateOfBirth');
    if (dob) {
      const countryCol = byRole.get('country');
      const dominant = countryCol ? countryEvidence(countryCol).dominant : undefined;
      const hint =
        dominant && dominant.share >= 0.9
          ? {
              monthFirst: MONTH_FIRST.has(dominant.code),
              why: `${pct(dominant.share)} of ${countryCol!.name} is ${dominant.code}, where dates are written ${MONTH_FIRST.has(dominant.code) ? 'month' : 'day'}-first`,
            }
          : undefined;
      const d = decideDate(dob, hint, unknownValues(context.conditions?.[dob.name]));
      if (d.transform) field('dateOfBirth', col(dob, [d.transform]), `${dob.name}: ${d.why}`);
      // The order of day and month is a person's to decide: the field waits for it, named, never guessed.
      else if (d.draft) field('dateOfBirth', { undecided: `dateOfBirth: ${d.todo}`, draft: col(dob, [d.draft]) });
      if (d.todo) todos.push(`dateOfBirth: ${d.todo}`);
    }
    const nat = take('nationality');
    if (nat) {
      const ev = countryEvidence(nat, true);
      field('nationalities', [col(nat, ['trim', 'nationality'])], `${nat.name} (${filled(nat)}): ${describePlaced(ev.placed, nat)}`);
      if (ev.unknown.length > 0)
        todos.push(
          `nationalities: values ${valuesWithCounts(ev.unknown)} of ${nat.name} are no country or nationality init knows; their rows are refused until you add them ({ nationality: { extra: { <value>: <ISO code> } } })`,
        );
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
  const countryEv = country ? countryEvidence(country) : undefined;
  const postcodeCol = byRole.get('postalCode');
  // No invented defaults: a country for an empty cell (or for a file without a country column)
  // only from evidence, written as the choice it is.
  let assumed: { code: string; why: string } | undefined;
  if (countryEv?.dominant && countryEv.dominant.share >= 0.9)
    assumed = { code: countryEv.dominant.code, why: `${pct(countryEv.dominant.share)} of the filled ${country!.name} values` };
  else if (!country && postcodeCol && shareOf(postcodeCol, 'postcode-nl') >= 0.9)
    assumed = {
      code: 'NL',
      why: `no country column; ${pct(shareOf(postcodeCol, 'postcode-nl'))} of ${postcodeCol.name} are Dutch postcodes`,
    };
  let countryExpr: Y | undefined;
  if (country) {
    const withDefault = country.empty > 0 && assumed;
    countryExpr = col(country, ['trim', ...(withDefault ? [{ default: assumed!.code }] : []), 'country']);
    const why = `${country.name} (${filled(country)}): ${describePlaced(countryEv!.placed, country)}${withDefault ? `; an empty cell (${rowsOf(country.empty)}) is taken as ${assumed!.code}: ${assumed!.why} — remove the default if that is wrong` : ''}`;
    field(type === 'person' ? 'countryCode' : 'countryOfIncorporation', countryExpr, why);
    if (type === 'organisation') field('countryCode', countryExpr);
    if (countryEv!.unknown.length > 0)
      todos.push(
        `countryCode: values ${valuesWithCounts(countryEv!.unknown)} of ${country.name} are no country init knows; their rows are refused until you add them ({ country: { extra: { <value>: <ISO code> } } })`,
      );
    if (country.empty > 0 && !assumed)
      todos.push(
        `countryCode: ${rowsOf(country.empty)} with an empty ${country.name} and no country stands out; their addresses are refused`,
      );
    if (withDefault)
      todos.push(
        `countryCode: ${rowsOf(country.empty)} with an empty ${country.name}; init wrote { default: ${assumed!.code} } (${assumed!.why}): confirm it`,
      );
  } else if (assumed) countryExpr = { value: assumed.code };
  const email = take('email');
  if (email)
    field(
      'emailAddress',
      col(email, ['email']),
      `${email.name}: ${pct(shareOf(email, 'email'))} look like e-mail addresses${how.has(email.name) ? ` (found by ${how.get(email.name)})` : ''}`,
    );

  const phones: Y[] = [];
  const phone = take('phone');
  const mobile = take('mobile');
  const phoneWhy: string[] = [];
  for (const [c, kind] of [
    [phone, type === 'person' ? 'home' : 'office'],
    [mobile, 'mobile'],
  ] as const) {
    if (!c) continue;
    const d = decidePhone(c, profile.sample, country, assumed);
    phones.push({ object: { type: { value: kind }, number: col(c, [{ phone: d.spec }]) } });
    phoneWhy.push(`${c.name}: ${d.why}`);
    if (d.todo) todos.push(`telephoneNumbers: ${d.todo}`);
  }
  if (phones.length > 0) field('telephoneNumbers', phones, phoneWhy.join('; '));

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
    const dutch = postcode ? shareOf(postcode, 'postcode-nl') : 0;
    // Dutch postcodes beside other countries' (a Dutch lender's Belgian customers): each row by its own country.
    const mixed = dutch >= 0.9 && country !== undefined && countryEv?.dominant?.code === 'NL' && countryEv.dominant.share < 1;
    if (postcode && (postcode.jsonNumbers > 0 || mixed)) {
      // A postcode written as a number lost its leading zeros: read by its country's rules, restored only where certain.
      const spec: Record<string, Y> = {
        ...(country ? { countryColumn: country.name } : {}),
        ...(assumed ? { country: assumed.code } : {}),
      };
      address.postalCode = col(postcode, [{ postcode: spec }]);
      why.push(
        `postcode ${postcode.name}: ${mixed ? `${pct(dutch)} Dutch postcodes beside other countries'` : `${rowsOf(postcode.jsonNumbers)} written as JSON numbers`}, read by ${country ? `the country of ${country.name}` : assumed ? assumed.code : 'no country'}'s rules (lost leading zeros put back where certain, else refused)`,
      );
      if (!country && !assumed)
        todos.push(
          `addresses[0].postalCode: ${postcode.name} holds numbers and no country reads them; they are refused until you give { postcode: { country: XX } }`,
        );
    } else if (postcode) {
      address.postalCode = col(postcode, dutch >= 0.9 ? ['postcode-nl'] : ['collapse-spaces', 'upper']);
      why.push(`postcode ${postcode.name} (${pct(dutch)} Dutch postcodes${dutch >= 0.9 ? ', checked as such' : ''})`);
    } else todos.push('addresses[0].postalCode (required in an address): no postcode column found');
    if (locality) address.locality = col(locality, ['collapse-spaces']);
    else todos.push('addresses[0].locality (required in an address): no place column found');
    if (countryExpr) address.countryCode = countryExpr;
    else
      todos.push(
        'addresses[0].countryCode (required in an address): no country column and no country init could infer; add { value: <ISO code> }',
      );
    if (!country && assumed) why.push(`country ${assumed.code}: ${assumed.why}`);
    field('addresses', [{ object: address }], why.join('; '));
  }

  const amount = take('incomeAmount');
  if (amount && type === 'person') {
    const implied = context.impliedDecimals?.[amount.name];
    const a = implied
      ? {
          number: { decimal: '.', thousands: '' } as const,
          why: `${implied} implied decimals (the layout's V${'9'.repeat(implied)}): the last ${implied} digits are the fraction`,
          strip: undefined,
          currency: undefined,
          point: implied,
        }
      : { ...decideAmount(amount, profile.sample), point: undefined };
    const freq = take('incomeFrequency');
    // The period from a frequency column, else from the words of the amount's header; never a default.
    const stated = freq ? undefined : periodOf(amount.name);
    const undecided: string[] = [];
    if (freq) {
      const table = withConditions(codeTable(freq, FREQUENCY_CODES, periodOf), context.conditions?.[freq.name], freq.name, periodOf);
      codes.frequentie = table.codes;
      if (table.unknown.length > 0)
        todos.push(
          `income.frequency: values ${valuesWithCounts(table.unknown)} of ${freq.name} are no known frequency; add them to codes.frequentie`,
        );
    } else if (!stated)
      undecided.push(
        `the period of ${amount.name} (no frequency column, and its header says neither monthly nor yearly): write frequency: { value: Monthly } (or Yearly…) in the draft`,
      );
    if (!a.currency)
      undecided.push(
        `the currency of ${amount.name} (neither its header nor its values name one): write currency: { value: <ISO 4217 code> } in the draft`,
      );
    const income: Y = {
      when: { column: amount.name, notEmpty: true },
      object: {
        amount: col(amount, [
          ...(a.strip ? [{ replace: { regex: a.strip, with: '' } }] : []),
          ...(a.point ? [{ replace: { regex: `^([+-]?\\d*?)(\\d{${a.point}})$`, with: '$1.$2' } }] : []),
          { number: a.number },
        ]),
        currency: a.currency ? { value: a.currency } : { value: 'TODO' },
        frequency: freq ? col(freq, ['trim', 'upper', { code: 'frequentie' }]) : { value: stated ?? 'TODO' },
      },
    };
    if (undecided.length > 0) todos.push(`income: undecided, not staged until you decide ${undecided.join('; and ')}`);
    field(
      'income',
      undecided.length > 0 ? { undecided: `income: ${undecided.join('; and ')}`, draft: income } : income,
      `${amount.name}: ${a.why}${stated ? `; ${stated}: the header says so` : ''}`,
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
    .map((c) => ({ column: c.name, reason: passed.get(c.name) ?? unmappedReason(c, byRole, type, prefix) }));
  return { type, keyColumn: key?.name, scope, keyTransforms, fields, codes, todos, notes, unmapped };
}

/** Where dates are written month-first. */
const MONTH_FIRST = new Set(['US', 'PH', 'FM', 'MH', 'PW', 'BZ']);

/** Why a column no field reads is left alone. */
function unmappedReason(c: ColumnProfile, byRole: Map<Role, ColumnProfile>, type: string, prefix: string | undefined): string {
  const m = roleMatch(c.name, prefix);
  if (c.values === c.empty) return 'empty in every row';
  if (m && byRole.get(m.role) === c) return `named like ${m.role}, which a ${type} has no field for`;
  if (m) return `named like ${m.role}, which a ${type} has no field for`;
  if (dateShare(c) >= 0.9) return 'dates, but the header does not say they are birth dates';
  return `header not recognised and its values (${c.distinct ? `${c.distinct.size} distinct` : 'many distinct'}) do not say what it holds`;
}

/** A country column's distinct values as read: `UK→GB, ENGLAND→GB, …`. */
function describePlaced(placed: Map<string, string>, c: ColumnProfile): string {
  if (!c.distinct) return 'many distinct values, read by the country transform';
  const shown = [...placed].slice(0, 8).map(([k, v]) => `${k}→${v}`);
  return `${c.distinct.size} distinct values (${shown.join(', ')}${placed.size > 8 ? ', …' : ''})`;
}

/**
 * A code table for a column's distinct values from a known table of legacy codes, with the
 * values it could not place. A column with too many distinct values gets the whole known table.
 */
function codeTable(
  c: ColumnProfile,
  known: Readonly<Record<string, string>>,
  /** Reads a value the table does not hold (the words of a period: `per maand`, `mensuel`). */
  words?: (value: string) => string | undefined,
): { codes: Record<string, string>; unknown: Array<[string, number]>; why: string } {
  if (!c.distinct) {
    const codes = Object.fromEntries(Object.entries(known));
    return { codes, unknown: [], why: 'many distinct values: the whole table of known codes' };
  }
  const codes: Record<string, string> = {};
  const unknown: Array<[string, number]> = [];
  for (const [v, n] of [...c.distinct].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    const code = lookupCode(known, v) ?? words?.(v);
    const upper = v.trim().toUpperCase();
    if (code) codes[upper] = code;
    else unknown.push([v, n]);
  }
  const mapped = Object.entries(codes)
    .slice(0, 8)
    .map(([k, v]) => `${k}→${v}`)
    .join(', ');
  return { codes, unknown, why: `${c.distinct.size} distinct values (${mapped}${Object.keys(codes).length > 8 ? ', …' : ''})` };
}

/** The words a copybook's 88-level names use for "not known": `XX-DOB-UNKNOWN`, `GEBDAT-ONBEKEND`, `DT-NAIS-INCONNUE`. */
const UNKNOWN_CONDITION =
  /(^|-)(UNKNOWN|NOT-KNOWN|NOTKNOWN|NONE|MISSING|ONBEKEND|UNBEKANNT|INCONNUE?|DESCONOCIDO|SCONOSCIUTO|NIEZNANY|DESCONHECIDO|NEZNAMY|OKAND|NO-DATE|NULL)(-|$)/i;

/** The values a field's 88-levels name "not known" (a birth date's `19000101`). */
function unknownValues(conditions: Array<{ name: string; values: string[] }> | undefined): string[] {
  return (conditions ?? []).filter((c) => UNKNOWN_CONDITION.test(c.name)).flatMap((c) => c.values);
}

/**
 * A code table completed by a copybook's 88-levels (`88 XX-SEX-MALE VALUE 'M'.`): the condition's
 * name, without its field's, says what each value means. A value the column's own words could
 * not place is placed by its condition, and no longer unknown.
 */
function withConditions(
  table: ReturnType<typeof codeTable>,
  conditions: Array<{ name: string; values: string[] }> | undefined,
  field: string,
  read: (word: string) => string | undefined,
): ReturnType<typeof codeTable> {
  if (!conditions || conditions.length === 0) return table;
  const codes = { ...table.codes };
  const placed: string[] = [];
  for (const c of conditions) {
    const meaning = c.name.toUpperCase().startsWith(`${field.toUpperCase()}-`) ? c.name.slice(field.length + 1) : c.name;
    const code = read(meaning) ?? read(meaning.split('-').pop() ?? meaning);
    if (code === undefined) continue;
    for (const v of c.values) {
      const key = v.trim().toUpperCase();
      if (codes[key] === undefined) codes[key] = code;
      placed.push(`${key}→${code} (88 ${c.name})`);
    }
  }
  if (placed.length === 0) return table;
  const unknown = table.unknown.filter(([v]) => codes[v.trim().toUpperCase()] === undefined);
  return { codes, unknown, why: `${table.why}; the copybook's 88-levels: ${placed.join(', ')}` };
}
