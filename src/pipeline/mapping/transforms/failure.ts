/** What a transform returns when it refuses its input: a stable code and a reason a person can act on. */
export class TransformFailure {
  constructor(
    readonly code: 'INVALID_FIELD_VALUE' | 'UNKNOWN_CODE',
    readonly message: string,
  ) {}
}
