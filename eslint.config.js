// Style rules for rrscan, checked by `npm run lint` (ESLint 9 flat config).
//
// Layout rules only (@stylistic), each one describing the style the code already has: dense lines up to 140
// characters, 2-space indent, single quotes, semicolons, the usual spacing. No formatter rewrites the code (its
// style would differ and touch every file); a broken rule fails `npm test` instead. `npx eslint --fix FILE` fixes
// everything but line length.
import stylistic from '@stylistic/eslint-plugin';
import tseslint from 'typescript-eslint';

const MAX_LEN = { code: 140, tabWidth: 2, ignoreUrls: true, ignoreRegExpLiterals: true };

/** A quoted string (single, double or back quotes; escapes allowed) of at least `min` characters, as a regex. */
const string = (min) => ["'", '"', '`'].map((q) => `${q}(?:[^${q}\\\\]|\\\\.){${min},}${q}`).join('|');
/** A line holding a string of 40+ characters. Strings are paired from the start of the line, so the text between two strings
 * never counts as one. */
const LONG_STRING = `^(?:[^'"\`\\\\]|\\\\.|${string(0)})*?(?:${string(40)})`;

export default [
  {
    // FlatBuffers output of schema/generate.sh (regenerated, never edited), build output, benchmark results.
    ignores: ['dist/**', 'node_modules/**', 'native/**', 'src/shard/generated/**', 'bench/out/**'],
  },
  {
    files: ['src/**/*.ts', 'workers/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'console/**/*.ts'],
    languageOptions: {
      // The layout rules need syntax only; the type-aware rules below add the program.
      parser: tseslint.parser,
      ecmaVersion: 2022,
      sourceType: 'module',
    },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    plugins: { '@stylistic': stylistic },
    rules: {
      '@stylistic/max-len': ['error', MAX_LEN],
      '@stylistic/indent': ['error', 2, { SwitchCase: 1 }],
      '@stylistic/no-tabs': 'error',
      '@stylistic/semi': ['error', 'always'],
      '@stylistic/quotes': ['error', 'single', { avoidEscape: true, allowTemplateLiterals: 'always' }],
      '@stylistic/no-trailing-spaces': 'error',
      '@stylistic/eol-last': ['error', 'always'],
      '@stylistic/linebreak-style': ['error', 'unix'],
      '@stylistic/no-multiple-empty-lines': ['error', { max: 2 }],
      '@stylistic/comma-dangle': ['error', 'always-multiline'],
      '@stylistic/comma-spacing': 'error',
      '@stylistic/semi-spacing': 'error',
      '@stylistic/no-extra-semi': 'error',
      '@stylistic/key-spacing': 'error',
      '@stylistic/keyword-spacing': 'error',
      '@stylistic/space-infix-ops': 'error',
      '@stylistic/space-before-blocks': 'error',
      '@stylistic/space-in-parens': 'error',
      '@stylistic/object-curly-spacing': ['error', 'always'],
      '@stylistic/arrow-spacing': 'error',
      '@stylistic/arrow-parens': ['error', 'always'],
      '@stylistic/function-call-spacing': 'error',
      '@stylistic/space-before-function-paren': ['error', { anonymous: 'never', named: 'never', asyncArrow: 'always' }],
      '@stylistic/type-annotation-spacing': 'error',
    },
  },
  {
    // Type-aware rules: what the compiler alone cannot see. They need the program, so each file is parsed with the
    // tsconfig that compiles it: tsconfig.test.json covers src, workers, bench, test and vitest.config.ts, and the console
    // (browser lib, bundler resolution) has its own.
    files: ['src/**/*.ts', 'workers/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'console/**/*.ts'],
    languageOptions: {
      parserOptions: {
        project: ['./tsconfig.test.json', './console/tsconfig.json'],
        tsconfigRootDir: import.meta.dirname,
      },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      // A promise nobody awaits loses its rejection (an unhandled rejection ends the process) and its ordering. Where
      // dropping it is meant, `void` says so.
      '@typescript-eslint/no-floating-promises': 'error',
      // A switch over a union names every member, even where a default would catch the rest: a member added later is
      // then a finding at each switch that must decide what to do with it, not a quiet trip through the default.
      '@typescript-eslint/switch-exhaustiveness-check': 'error',
      // An assertion the types already guarantee hides the ones that matter.
      '@typescript-eslint/no-unnecessary-type-assertion': 'error',
    },
  },
  {
    // Tests hold data: RFC test vectors (hex, base64, presentation format), wire-format JSON lines, expected messages.
    // A line with such a string (40+ characters) stays whole, so a vector or message reads and greps as one piece.
    files: ['test/**/*.ts'],
    rules: {
      '@stylistic/max-len': ['error', { ...MAX_LEN, ignorePattern: LONG_STRING }],
    },
  },
  {
    // The demo data's vocabulary: tables of providers and words, one entry a line, so that an entry reads, diffs and
    // greps as one row. Wrapping them at 140 columns would scatter each entry over several lines.
    files: ['src/demo/vocabulary.ts'],
    rules: { '@stylistic/max-len': 'off' },
  },
];
