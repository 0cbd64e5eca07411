// How a standard-search name value selects names (compat.md "Values":
// owner-name wildcards), as the query layer parses it and a data backend
// answers it. Names are lower-case presentation form with the trailing dot.

/** How a name value matches owner names or rdata names. */
export type NameMatch =
  | { mode: 'exact'; name: string }
  /** `*.example.com`: the name and everything under it. */
  | { mode: 'under'; name: string }
  /** `+.example.com`: exactly one label under the name. */
  | { mode: 'one-under'; name: string }
  /** `www.example.*`: names starting with these labels. `prefix` ends with a dot. */
  | { mode: 'starts'; prefix: string }
  /** `www.example.+`: these labels and exactly one more. */
  | { mode: 'one-more'; prefix: string };
