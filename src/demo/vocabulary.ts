// The hand-written vocabulary the demo generator draws from: words and
// syllables for domain names, a weighted TLD mix, subdomain labels, and the
// hosting, DNS, mail and CDN providers whose infrastructure names and address
// blocks make the data look like the Internet.
//
// Contract: everything here is lower-case ASCII (IDN words excepted; the
// generator converts them with domainToASCII) and fixed, so the generator's
// output depends only on its seed. Nothing is copied from the real lists in
// ../shared; provider prefixes are the well-known public blocks of each
// operator, written from memory, and need only be plausible.

/** Common English words used in brandable names ("cloudpeak", "blue-harbor"). */
export const WORDS: readonly string[] = [
  'acme', 'active', 'alpha', 'amber', 'anchor', 'apex', 'apple', 'arc', 'arrow', 'art', 'atlas', 'aura', 'auto',
  'bay', 'beacon', 'bear', 'bee', 'best', 'big', 'bio', 'bird', 'bit', 'black', 'blade', 'blue', 'bold', 'book',
  'box', 'brain', 'bridge', 'bright', 'brook', 'build', 'byte', 'cafe', 'camp', 'canvas', 'cap', 'care', 'cart',
  'cash', 'castle', 'cat', 'cedar', 'central', 'chain', 'chef', 'city', 'clean', 'clear', 'click', 'cloud', 'club',
  'coast', 'code', 'coin', 'core', 'craft', 'crest', 'crown', 'cube', 'cyber', 'daily', 'dash', 'data', 'dawn',
  'deal', 'deep', 'delta', 'design', 'dev', 'digital', 'direct', 'dock', 'dog', 'dot', 'dream', 'drive', 'eagle',
  'earth', 'east', 'eco', 'edge', 'elite', 'ember', 'energy', 'epic', 'event', 'expert', 'express', 'fair',
  'falcon', 'farm', 'fast', 'field', 'film', 'fire', 'first', 'fish', 'fit', 'flash', 'fleet', 'flow', 'fly',
  'focus', 'food', 'force', 'forest', 'forge', 'fox', 'fresh', 'front', 'fun', 'fusion', 'future', 'game',
  'garden', 'gate', 'gear', 'gem', 'giant', 'global', 'gold', 'good', 'green', 'grid', 'group', 'grow', 'guide',
  'harbor', 'hawk', 'health', 'heart', 'hero', 'high', 'hill', 'home', 'hope', 'host', 'house', 'hub', 'icon',
  'idea', 'image', 'impact', 'info', 'ink', 'inn', 'insight', 'iron', 'island', 'jet', 'job', 'joy', 'key',
  'kid', 'king', 'kit', 'lab', 'lake', 'land', 'laser', 'leaf', 'legal', 'lemon', 'life', 'light', 'lime', 'line',
  'link', 'lion', 'live', 'local', 'logic', 'loop', 'lotus', 'lucky', 'lunar', 'magic', 'maple', 'map', 'market',
  'max', 'media', 'medic', 'mega', 'metro', 'micro', 'mind', 'mint', 'mobile', 'moon', 'motion', 'motor',
  'mountain', 'move', 'music', 'nano', 'nature', 'net', 'new', 'next', 'night', 'noble', 'north', 'nova', 'oak',
  'ocean', 'office', 'omega', 'one', 'open', 'orbit', 'orange', 'origin', 'owl', 'pace', 'pack', 'palm', 'paper',
  'park', 'path', 'peak', 'pearl', 'pet', 'photo', 'pilot', 'pine', 'pixel', 'pizza', 'planet', 'play', 'plus',
  'point', 'polar', 'pop', 'port', 'power', 'prime', 'pro', 'pulse', 'pure', 'quest', 'quick', 'radio', 'rain',
  'rapid', 'raven', 'ready', 'real', 'red', 'rest', 'ride', 'ridge', 'river', 'road', 'rock', 'rocket', 'root',
  'rose', 'royal', 'safe', 'sage', 'sail', 'salt', 'sand', 'scale', 'school', 'sea', 'secure', 'seed', 'sense',
  'shape', 'share', 'shift', 'shine', 'ship', 'shop', 'signal', 'silver', 'simple', 'sky', 'smart', 'snap',
  'social', 'solar', 'solid', 'sound', 'south', 'space', 'spark', 'sport', 'spring', 'square', 'star', 'start',
  'steel', 'stone', 'store', 'storm', 'stream', 'street', 'studio', 'summit', 'sun', 'super', 'swift', 'sync',
  'system', 'tag', 'talent', 'task', 'team', 'tech', 'terra', 'test', 'thunder', 'tide', 'tiger', 'time', 'top',
  'tower', 'town', 'track', 'trade', 'trail', 'travel', 'tree', 'trend', 'tribe', 'true', 'trust', 'turbo',
  'twin', 'ultra', 'union', 'unit', 'urban', 'valley', 'value', 'vector', 'venture', 'via', 'view', 'villa',
  'vision', 'vista', 'vital', 'voice', 'volt', 'wave', 'way', 'web', 'well', 'west', 'white', 'wild', 'wind',
  'wing', 'wise', 'wolf', 'wood', 'work', 'world', 'yard', 'yellow', 'young', 'zen', 'zero', 'zone',
];

/** Suffix words that make a name sound like a business ("-solutions", "-online"). */
export const BUSINESS_SUFFIXES: readonly string[] = [
  'solutions', 'systems', 'group', 'labs', 'media', 'online', 'shop', 'store', 'studio', 'tech', 'works', 'hq',
  'app', 'apps', 'cloud', 'consulting', 'digital', 'global', 'hub', 'network', 'partners', 'services', 'ventures',
  'world', 'direct', 'center', 'agency', 'design', 'mart', 'zone', 'now', 'ly', 'ify', 'io', 'co', 'pro', '24',
  '365', 'online', 'express', 'web', 'net', 'club', 'life', 'land',
];

/** Syllables for invented brand names ("zentora", "kalumi"). */
export const SYLLABLES: readonly string[] = [
  'ba', 'be', 'bi', 'bo', 'bu', 'ca', 'co', 'da', 'de', 'di', 'do', 'fa', 'fe', 'fi', 'ga', 'go', 'ha', 'he', 'ka',
  'ke', 'ki', 'ko', 'ku', 'la', 'le', 'li', 'lo', 'lu', 'ma', 'me', 'mi', 'mo', 'mu', 'na', 'ne', 'ni', 'no', 'nu',
  'pa', 'pe', 'pi', 'po', 'ra', 're', 'ri', 'ro', 'ru', 'sa', 'se', 'si', 'so', 'su', 'ta', 'te', 'ti', 'to', 'tu',
  'va', 've', 'vi', 'vo', 'za', 'ze', 'zi', 'zo', 'xa', 'xi', 'ya', 'yo', 'tra', 'tri', 'tro', 'bra', 'bri', 'cra',
  'cri', 'dra', 'dro', 'fla', 'flo', 'gra', 'gri', 'kla', 'klo', 'pla', 'pro', 'qua', 'sta', 'sto', 'stra', 'tha',
  'tho', 'vel', 'ven', 'ver', 'lex', 'max', 'nex', 'rex', 'tek', 'zen', 'ton', 'tor', 'ria', 'lia', 'nia', 'ora',
  'ara', 'ica', 'ium', 'ix', 'on', 'an', 'en', 'is', 'us', 'ly', 'fy', 'io',
];

/** Words of national flavour, used for country-code TLDs so de/ru/fr names read right. */
export const LOCAL_WORDS: Readonly<Record<string, readonly string[]>> = {
  de: ['haus', 'bau', 'technik', 'reisen', 'autohaus', 'baeckerei', 'praxis', 'kanzlei', 'mueller', 'schmidt',
    'schneider', 'fischer', 'weber', 'wagner', 'becker', 'hoffmann', 'garten', 'werkstatt', 'immobilien', 'stadt',
    'verein', 'schule', 'apotheke', 'hotel', 'berlin', 'hamburg', 'koeln', 'muenchen', 'sport', 'foto', 'elektro',
    'dach', 'holz', 'metall', 'versicherung', 'steuer', 'zahnarzt', 'friseur', 'blumen', 'kueche'],
  ru: ['stroy', 'market', 'mir', 'dom', 'gorod', 'auto', 'servis', 'torg', 'med', 'kniga', 'moskva', 'piter',
    'sibir', 'ural', 'volga', 'kazan', 'novosti', 'tur', 'mebel', 'okna', 'dveri', 'remont', 'shop', 'sport',
    'zdorovie', 'obrazovanie', 'bank', 'invest', 'kredit', 'avto'],
  fr: ['maison', 'boutique', 'voyage', 'cuisine', 'jardin', 'immobilier', 'avocat', 'paris', 'lyon', 'marseille',
    'bordeaux', 'ecole', 'mairie', 'pharmacie', 'boulangerie', 'vin', 'chateau', 'atelier', 'conseil', 'sante'],
  uk: ['london', 'manchester', 'leeds', 'bristol', 'garage', 'builders', 'plumbing', 'estates', 'lettings', 'surgery',
    'solicitors', 'accountants', 'florist', 'bakery', 'pub', 'hotel', 'tyres', 'removals', 'roofing', 'joinery'],
  nl: ['huis', 'winkel', 'bouw', 'fiets', 'tuin', 'amsterdam', 'rotterdam', 'utrecht', 'advies', 'zorg'],
  es: ['casa', 'tienda', 'viajes', 'abogados', 'madrid', 'barcelona', 'sevilla', 'clinica', 'inmobiliaria', 'moda'],
  it: ['casa', 'negozio', 'viaggi', 'roma', 'milano', 'napoli', 'torino', 'studio', 'pizzeria', 'ristorante'],
  pl: ['dom', 'sklep', 'warszawa', 'krakow', 'serwis', 'budowa', 'auto', 'meble', 'zdrowie', 'biuro'],
  br: ['casa', 'loja', 'viagem', 'saopaulo', 'rio', 'imoveis', 'advocacia', 'saude', 'moda', 'escola'],
  jp: ['tokyo', 'osaka', 'kyoto', 'shop', 'sakura', 'nihon', 'yokohama', 'kobe', 'hotel', 'clinic'],
};

/**
 * TLD mix by weight, roughly the shape of passive-DNS traffic: com dominates,
 * then net and org, then large ccTLDs and cheap new gTLDs. `zone` marks TLDs
 * whose zone files a passive-DNS operator receives (ICANN CZDS and a few
 * ccTLDs), so delegations there also get zone observations. `local` picks a
 * LOCAL_WORDS list.
 */
export interface TldInfo {
  readonly suffix: string;
  readonly weight: number;
  readonly zone: boolean;
  readonly local?: string;
}

export const TLDS: readonly TldInfo[] = [
  { suffix: 'com', weight: 460, zone: true },
  { suffix: 'net', weight: 60, zone: true },
  { suffix: 'org', weight: 45, zone: true },
  { suffix: 'de', weight: 40, zone: false, local: 'de' },
  { suffix: 'co.uk', weight: 22, zone: false, local: 'uk' },
  { suffix: 'org.uk', weight: 3, zone: false, local: 'uk' },
  { suffix: 'uk', weight: 5, zone: false, local: 'uk' },
  { suffix: 'ru', weight: 30, zone: false, local: 'ru' },
  { suffix: 'io', weight: 14, zone: false },
  { suffix: 'xyz', weight: 14, zone: true },
  { suffix: 'info', weight: 14, zone: true },
  { suffix: 'top', weight: 12, zone: true },
  { suffix: 'nl', weight: 12, zone: false, local: 'nl' },
  { suffix: 'fr', weight: 11, zone: false, local: 'fr' },
  { suffix: 'br', weight: 3, zone: false, local: 'br' },
  { suffix: 'com.br', weight: 9, zone: false, local: 'br' },
  { suffix: 'it', weight: 9, zone: false, local: 'it' },
  { suffix: 'pl', weight: 8, zone: false, local: 'pl' },
  { suffix: 'es', weight: 7, zone: false, local: 'es' },
  { suffix: 'jp', weight: 4, zone: false, local: 'jp' },
  { suffix: 'co.jp', weight: 3, zone: false, local: 'jp' },
  { suffix: 'au', weight: 1, zone: false },
  { suffix: 'com.au', weight: 7, zone: false },
  { suffix: 'ca', weight: 6, zone: false },
  { suffix: 'eu', weight: 6, zone: false },
  { suffix: 'online', weight: 8, zone: true },
  { suffix: 'site', weight: 6, zone: true },
  { suffix: 'shop', weight: 5, zone: true },
  { suffix: 'store', weight: 3, zone: true },
  { suffix: 'app', weight: 5, zone: true },
  { suffix: 'dev', weight: 4, zone: true },
  { suffix: 'biz', weight: 4, zone: true },
  { suffix: 'us', weight: 4, zone: true },
  { suffix: 'me', weight: 4, zone: false },
  { suffix: 'co', weight: 5, zone: false },
  { suffix: 'tv', weight: 2, zone: false },
  { suffix: 'cc', weight: 2, zone: false },
  { suffix: 'in', weight: 5, zone: false },
  { suffix: 'cn', weight: 6, zone: false },
  { suffix: 'com.cn', weight: 2, zone: false },
  { suffix: 'ch', weight: 4, zone: false },
  { suffix: 'at', weight: 3, zone: false, local: 'de' },
  { suffix: 'se', weight: 3, zone: false },
  { suffix: 'cz', weight: 3, zone: false },
  { suffix: 'ua', weight: 2, zone: false, local: 'ru' },
  { suffix: 'club', weight: 3, zone: true },
  { suffix: 'icu', weight: 3, zone: true },
  { suffix: 'vip', weight: 2, zone: true },
  { suffix: 'live', weight: 2, zone: true },
  { suffix: 'tech', weight: 2, zone: true },
  { suffix: 'ai', weight: 2, zone: false },
];

/** TLDs favoured by throw-away phishing and malware domains. */
export const ABUSE_TLDS: readonly string[] = [
  'xyz', 'top', 'online', 'site', 'icu', 'info', 'club', 'live', 'vip', 'shop', 'com', 'net', 'support', 'help',
  'buzz', 'monster', 'rest', 'cfd', 'sbs', 'click', 'link', 'work', 'tk', 'ml', 'ga',
];

/** IDN words (U-labels) and the TLDs they go with; the generator converts them to xn-- A-labels. */
export const IDN_NAMES: readonly (readonly [string, string])[] = [
  ['münchen', 'de'], ['bücher', 'de'], ['köln', 'de'], ['düsseldorf', 'de'], ['bäckerei', 'de'], ['grüße', 'de'],
  ['straße', 'de'], ['schön', 'de'], ['café', 'fr'], ['crème', 'fr'], ['élysée', 'fr'], ['pâtisserie', 'fr'],
  ['пример', 'рф'], ['москва', 'рф'], ['магазин', 'рф'], ['новости', 'рф'], ['почта', 'рф'], ['банк', 'рф'],
  ['日本語', 'jp'], ['東京', 'jp'], ['中国', 'cn'], ['北京', 'cn'], ['españa', 'es'], ['niño', 'es'], ['señor', 'com'],
  ['ñandú', 'com'], ['zürich', 'ch'], ['göteborg', 'se'], ['malmö', 'se'], ['αθήνα', 'gr'], ['ελλάδα', 'com'],
  ['한국', 'kr'], ['서울', 'kr'], ['türkiye', 'com'], ['istanbul-çiçek', 'com'], ['łódź', 'pl'], ['kraków', 'pl'],
  // Homograph lookalikes: Cyrillic letters that render like Latin ones.
  ['аррӏе', 'com'], ['раураl', 'com'], ['gооgle', 'com'], ['micrоsoft', 'com'], ['аmazon', 'com'],
];

/** Brands phishers imitate; demo queries for `paypal` or `.*-login\..*` find their lookalikes. */
export const PHISH_BRANDS: readonly string[] = [
  'paypal', 'apple', 'appleid', 'icloud', 'microsoft', 'office365', 'outlook', 'amazon', 'netflix', 'google',
  'facebook', 'instagram', 'whatsapp', 'chase', 'wellsfargo', 'bankofamerica', 'dhl', 'fedex', 'usps', 'ups',
  'coinbase', 'binance', 'metamask', 'steam', 'linkedin', 'docusign', 'dropbox', 'adobe', 'ebay', 'hsbc',
];

export const PHISH_WORDS: readonly string[] = [
  'login', 'signin', 'verify', 'verification', 'secure', 'security', 'account', 'update', 'support', 'service',
  'help', 'billing', 'payment', 'confirm', 'unlock', 'recovery', 'auth', 'id', 'wallet', 'alert', 'notice',
  'customer', 'online', 'web', 'portal', 'center', 'team', 'check', 'access', 'restore',
];

/** Fixed lookalikes the demo always contains, so documented example queries have answers. */
export const PHISH_FIXED: readonly string[] = [
  'paypal-login-verify.xyz', 'secure-paypal.com.account-update.top', 'appleid-support-login.com',
  'microsoft-login.online', 'paypal-resolution-center.info', 'login-microsoftonline.site', 'amazon-account-verify.icu',
  'netflix-billing-update.top', 'icloud-find-login.live', 'secure-chase-login.com.verify-session.online',
  'dhl-parcel-tracking.xyz', 'coinbase-wallet-restore.app',
];

/** Subdomain labels by how common they are (earlier = more common). */
export const SUBDOMAINS: readonly string[] = [
  'mail', 'api', 'cdn', 'blog', 'shop', 'm', 'app', 'admin', 'login', 'secure', 'portal', 'dev', 'staging', 'test',
  'vpn', 'autodiscover', 'webmail', 'smtp', 'ftp', 'remote', 'static', 'img', 'images', 'media', 'assets', 'support',
  'help', 'docs', 'status', 'git', 'jira', 'wiki', 'intranet', 'owa', 'cpanel', 'webdisk', 'ns', 'beta', 'news',
  'store', 'pay', 'account', 'accounts', 'auth', 'sso', 'id', 'my', 'dashboard', 'panel', 'crm', 'erp', 'hr',
  'careers', 'jobs', 'events', 'forum', 'community', 'kb', 'download', 'downloads', 'files', 'cloud', 'backup',
  'db', 'mysql', 'sql', 'monitor', 'grafana', 'kibana', 'ci', 'jenkins', 'gitlab', 'registry', 'demo', 'sandbox',
  'uat', 'qa', 'preprod', 'prod', 'origin', 'edge', 'video', 'live', 'stream', 'chat', 'meet', 'calendar', 'link',
  'go', 'track', 'click', 'email', 'news', 'newsletter', 'survey', 'partners', 'investors', 'en', 'de', 'fr', 'us',
  'eu', 'uk', 'asia', 'mx', 'relay', 'imap', 'pop', 'pop3', 'lyncdiscover', 'sip', 'enterpriseregistration',
  'enterpriseenrollment', 'selector1._domainkey', 'k1._domainkey', 'google._domainkey',
];

/** Hosting providers: weight, IPv4 /16 prefixes (first two octets) and IPv6 /32 prefixes (first two groups). */
export interface HostingProvider {
  readonly name: string;
  readonly weight: number;
  readonly v4: readonly (readonly [number, number])[];
  readonly v6: readonly (readonly [number, number])[];
  /** Fraction of domains that also publish AAAA here. */
  readonly v6Share: number;
}

export const HOSTING: readonly HostingProvider[] = [
  { name: 'cloudflare', weight: 180, v4: [[104, 16], [104, 17], [104, 18], [104, 21], [172, 64], [172, 67], [188, 114]], v6: [[0x2606, 0x4700], [0x2a06, 0x98c1]], v6Share: 0.9 },
  { name: 'aws', weight: 160, v4: [[52, 1], [52, 20], [54, 72], [54, 230], [3, 120], [18, 184], [13, 32], [35, 170]], v6: [[0x2600, 0x1f18], [0x2600, 0x9000]], v6Share: 0.2 },
  { name: 'google', weight: 70, v4: [[34, 102], [34, 120], [35, 186], [35, 227], [142, 250], [216, 239]], v6: [[0x2600, 0x1901], [0x2607, 0xf8b0]], v6Share: 0.35 },
  { name: 'azure', weight: 50, v4: [[20, 42], [20, 50], [40, 112], [13, 107], [52, 164]], v6: [[0x2603, 0x1030]], v6Share: 0.1 },
  { name: 'hetzner', weight: 45, v4: [[88, 198], [78, 46], [116, 202], [159, 69], [135, 181], [49, 12]], v6: [[0x2a01, 0x4f8], [0x2a01, 0x4f9]], v6Share: 0.5 },
  { name: 'ovh', weight: 45, v4: [[51, 38], [51, 68], [54, 36], [137, 74], [145, 239], [213, 186]], v6: [[0x2001, 0x41d0]], v6Share: 0.4 },
  { name: 'digitalocean', weight: 40, v4: [[138, 197], [159, 89], [167, 99], [104, 131], [164, 90], [46, 101]], v6: [[0x2604, 0xa880], [0x2a03, 0xb0c0]], v6Share: 0.3 },
  { name: 'godaddy', weight: 40, v4: [[184, 168], [50, 63], [160, 153], [107, 180], [198, 71], [148, 72]], v6: [[0x2603, 0x3]], v6Share: 0.05 },
  { name: 'linode', weight: 18, v4: [[45, 33], [172, 105], [139, 162], [50, 116]], v6: [[0x2600, 0x3c00], [0x2a01, 0x7e00]], v6Share: 0.4 },
  { name: 'ionos', weight: 22, v4: [[217, 160], [212, 227], [82, 165], [74, 208]], v6: [[0x2001, 0x8d8]], v6Share: 0.3 },
  { name: 'fastly', weight: 15, v4: [[151, 101], [199, 232], [146, 75]], v6: [[0x2a04, 0x4e42]], v6Share: 0.6 },
  { name: 'akamai', weight: 15, v4: [[23, 32], [23, 45], [104, 64], [184, 24], [2, 16]], v6: [[0x2600, 0x1400], [0x2a02, 0x26f0]], v6Share: 0.5 },
  { name: 'vercel', weight: 10, v4: [[76, 76], [66, 33]], v6: [[0x2606, 0x4700]], v6Share: 0.0 },
  { name: 'github', weight: 8, v4: [[185, 199]], v6: [[0x2606, 0x50c0]], v6Share: 0.7 },
  { name: 'alibaba', weight: 20, v4: [[47, 88], [47, 91], [47, 241], [8, 210], [39, 96], [120, 55]], v6: [[0x2408, 0x4000]], v6Share: 0.05 },
  { name: 'tencent', weight: 12, v4: [[43, 128], [49, 234], [119, 28], [150, 109]], v6: [[0x240d, 0xc000]], v6Share: 0.05 },
  { name: 'selectel', weight: 10, v4: [[31, 184], [92, 53], [188, 93], [95, 213]], v6: [[0x2a0b, 0x4140]], v6Share: 0.05 },
  { name: 'regru', weight: 14, v4: [[31, 31], [37, 140], [194, 58], [89, 108]], v6: [[0x2a00, 0xf940]], v6Share: 0.05 },
  { name: 'timeweb', weight: 10, v4: [[92, 53], [185, 114], [176, 57]], v6: [[0x2a03, 0x6f00]], v6Share: 0.05 },
  { name: 'strato', weight: 10, v4: [[81, 169], [85, 214], [217, 110]], v6: [[0x2a01, 0x238]], v6Share: 0.4 },
  { name: 'hostinger', weight: 18, v4: [[145, 14], [153, 92], [185, 224], [89, 117]], v6: [[0x2a02, 0x4780]], v6Share: 0.3 },
  { name: 'namecheap', weight: 14, v4: [[198, 54], [162, 213], [162, 0], [68, 65]], v6: [[0x2a0b, 0x7280]], v6Share: 0.05 },
  { name: 'bluehost', weight: 12, v4: [[162, 241], [50, 87], [69, 89], [192, 185]], v6: [[0x2605, 0x2800]], v6Share: 0.02 },
  { name: 'contabo', weight: 10, v4: [[161, 97], [173, 212], [62, 171], [144, 91]], v6: [[0x2a02, 0xc207]], v6Share: 0.3 },
  { name: 'vultr', weight: 10, v4: [[45, 32], [45, 76], [108, 61], [149, 28], [207, 148]], v6: [[0x2001, 0x19f0]], v6Share: 0.4 },
  { name: 'leaseweb', weight: 8, v4: [[5, 79], [37, 48], [85, 17], [212, 32]], v6: [[0x2a00, 0xc98]], v6Share: 0.2 },
  { name: 'wix', weight: 10, v4: [[185, 230], [23, 236]], v6: [[0x2620, 0x11c]], v6Share: 0.0 },
  { name: 'squarespace', weight: 8, v4: [[198, 185], [198, 49]], v6: [[0x2620, 0x7f]], v6Share: 0.0 },
  { name: 'shopify', weight: 10, v4: [[23, 227]], v6: [[0x2620, 0x127]], v6Share: 0.5 },
  { name: 'ovh-ca', weight: 6, v4: [[142, 44], [158, 69], [192, 99]], v6: [[0x2607, 0x5300]], v6Share: 0.3 },
  { name: 'sakura', weight: 5, v4: [[133, 242], [153, 126], [160, 16]], v6: [[0x2403, 0x3a00]], v6Share: 0.2 },
];

/**
 * DNS hosting. `hosts(k, r)` names the k-th server set member given a per-domain
 * random number r (so one provider hands out many different NS pairs, the way
 * Cloudflare and Route 53 do); `rname` is the SOA mailbox; `serial` picks the
 * SOA serial style.
 */
export interface DnsProvider {
  readonly name: string;
  readonly weight: number;
  readonly nsCount: number;
  readonly hosts: (k: number, r: number) => string;
  /** The SOA RNAME; '' means hostmaster.<domain>. */
  readonly rname: string;
  readonly serial: 'date' | 'epoch' | 'counter';
  /** SOA refresh retry expire minimum. */
  readonly timers: string;
}

const CF_NAMES = ['ada', 'bob', 'cruz', 'dana', 'elle', 'fred', 'gina', 'hank', 'ivan', 'jill', 'kirk', 'lara',
  'mike', 'nina', 'otto', 'pam', 'quinn', 'rita', 'sam', 'tara', 'uma', 'vern', 'will', 'xena', 'yara', 'zod',
  'amir', 'beth', 'carl', 'dawn', 'eric', 'faye', 'gary', 'hope', 'igor', 'jane', 'kurt', 'lana', 'marc', 'nora'];
const pad = (n: number, w: number): string => String(n).padStart(w, '0');

export const DNS_PROVIDERS: readonly DnsProvider[] = [
  { name: 'cloudflare', weight: 200, nsCount: 2, hosts: (k, r) => `${CF_NAMES[(r + k * 7) % CF_NAMES.length]}.ns.cloudflare.com`, rname: 'dns.cloudflare.com', serial: 'epoch', timers: '10000 2400 604800 1800' },
  { name: 'route53', weight: 120, nsCount: 4, hosts: (k, r) => `ns-${(r + k * 509) % 2048}.awsdns-${pad((r >> 3) % 64, 2)}.${['com', 'net', 'org', 'co.uk'][k % 4]}`, rname: 'awsdns-hostmaster.amazon.com', serial: 'counter', timers: '7200 900 1209600 86400' },
  { name: 'godaddy', weight: 110, nsCount: 2, hosts: (k, r) => `ns${pad(((r % 39) * 2 + k + 1) % 80 || 1, 2)}.domaincontrol.com`, rname: 'dns.jomax.net', serial: 'date', timers: '28800 7200 604800 600' },
  { name: 'namecheap', weight: 50, nsCount: 2, hosts: (k) => `dns${k + 1}.registrar-servers.com`, rname: 'hostmaster.registrar-servers.com', serial: 'epoch', timers: '43200 3600 604800 3601' },
  { name: 'google', weight: 40, nsCount: 4, hosts: (k, r) => `ns-cloud-${'abcde'[r % 5]}${k + 1}.googledomains.com`, rname: 'cloud-dns-hostmaster.google.com', serial: 'counter', timers: '21600 3600 259200 300' },
  { name: 'azure', weight: 30, nsCount: 4, hosts: (k, r) => `ns${k + 1}-${pad(r % 100, 2)}.azure-dns.${['com', 'net', 'org', 'info'][k]}`, rname: 'azuredns-hostmaster.microsoft.com', serial: 'counter', timers: '3600 300 2419200 300' },
  { name: 'ovh', weight: 30, nsCount: 2, hosts: (k, r) => (k === 0 ? `dns${(r % 200) + 1}.ovh.net` : `ns${(r % 200) + 1}.ovh.net`), rname: 'tech.ovh.net', serial: 'date', timers: '86400 3600 3600000 300' },
  { name: 'hetzner', weight: 20, nsCount: 3, hosts: (k) => ['hydrogen.ns.hetzner.com', 'oxygen.ns.hetzner.com', 'helium.ns.hetzner.de'][k]!, rname: 'dns.hetzner.com', serial: 'date', timers: '86400 10800 3600000 3600' },
  { name: 'ionos', weight: 25, nsCount: 4, hosts: (k, r) => `ns${1000 + (r % 120)}.ui-dns.${['com', 'de', 'org', 'biz'][k]}`, rname: 'hostmaster.1und1.com', serial: 'date', timers: '28800 7200 604800 300' },
  { name: 'nsone', weight: 12, nsCount: 4, hosts: (k, r) => `dns${k + 1}.p${pad((r % 10) + 1, 2)}.nsone.net`, rname: 'hostmaster.nsone.net', serial: 'epoch', timers: '43200 7200 1209600 3600' },
  { name: 'ultradns', weight: 8, nsCount: 4, hosts: (k) => `pdns${[1, 2, 3, 5][k]}.ultradns.${['net', 'net', 'org', 'info'][k]}`, rname: 'hostmaster.ultradns.net', serial: 'counter', timers: '10800 3600 2592000 300' },
  { name: 'dnsmadeeasy', weight: 8, nsCount: 3, hosts: (k) => `ns${5 + k}.dnsmadeeasy.com`, rname: 'dns.dnsmadeeasy.com', serial: 'counter', timers: '43200 3600 1209600 180' },
  { name: 'digitalocean', weight: 18, nsCount: 3, hosts: (k) => `ns${k + 1}.digitalocean.com`, rname: 'hostmaster.digitalocean.com', serial: 'epoch', timers: '10800 3600 604800 1800' },
  { name: 'linode', weight: 8, nsCount: 4, hosts: (k) => `ns${k + 1}.linode.com`, rname: 'hostmaster.linode.com', serial: 'epoch', timers: '14400 14400 1209600 86400' },
  { name: 'gandi', weight: 10, nsCount: 3, hosts: (k, r) => `ns-${(r % 250) + 1}-${'abc'[k]}.gandi.net`, rname: 'hostmaster.gandi.net', serial: 'epoch', timers: '10800 3600 604800 10800' },
  { name: 'wix', weight: 8, nsCount: 2, hosts: (k, r) => `ns${(r % 14) * 2 + k}.wixdns.net`, rname: 'support.wix.com', serial: 'counter', timers: '10800 3600 604800 3600' },
  { name: 'squarespace', weight: 5, nsCount: 4, hosts: (k) => `ns${k + 1}.squarespacedns.com`, rname: 'hostmaster.squarespacedns.com', serial: 'epoch', timers: '7200 3600 1209600 3600' },
  { name: 'bluehost', weight: 10, nsCount: 2, hosts: (k) => `ns${k + 1}.bluehost.com`, rname: 'dnsadmin.box.bluehost.com', serial: 'date', timers: '86400 7200 3600000 300' },
  { name: 'hostgator', weight: 8, nsCount: 2, hosts: (k, r) => `ns${(r % 9000) * 2 + 1 + k}.hostgator.com`, rname: 'dnsadmin.gator.hostgator.com', serial: 'date', timers: '86400 7200 3600000 300' },
  { name: 'regru', weight: 18, nsCount: 2, hosts: (k) => `ns${k + 1}.reg.ru`, rname: 'hostmaster.reg.ru', serial: 'date', timers: '10800 3600 604800 10800' },
  { name: 'yandex', weight: 8, nsCount: 2, hosts: (k) => `dns${k + 1}.yandex.net`, rname: 'dns-admin.yandex.net', serial: 'date', timers: '14400 900 1209600 14400' },
  { name: 'selectel', weight: 6, nsCount: 4, hosts: (k) => `ns${k + 1}.selectel.org`, rname: 'support.selectel.ru', serial: 'epoch', timers: '10800 3600 604800 3600' },
  { name: 'dnspod', weight: 12, nsCount: 2, hosts: (k, r) => `${['f1g1ns', 'ns3', 'ns4'][r % 3]}${k + 1}.dnspod.net`, rname: 'freednsadmin.dnspod.com', serial: 'counter', timers: '3600 180 1209600 180' },
  { name: 'alidns', weight: 12, nsCount: 2, hosts: (k, r) => `${['dns', 'ns', 'vip'][r % 3]}${(r % 30) * 2 + 1 + k}.hichina.com`, rname: 'hostmaster.hichina.com', serial: 'counter', timers: '3600 1200 86400 600' },
  { name: 'inwx', weight: 6, nsCount: 3, hosts: (k) => `ns${k === 0 ? '' : k + 1}.inwx.${['de', 'de', 'eu'][k]}`, rname: 'hostmaster.inwx.de', serial: 'date', timers: '10800 3600 604800 3600' },
  { name: 'strato', weight: 6, nsCount: 2, hosts: (k) => `docks${pad(10 + k, 2)}.rzone.de`, rname: 'hostmaster.strato-rz.de', serial: 'date', timers: '86400 7200 604800 7200' },
  { name: 'hostinger', weight: 12, nsCount: 2, hosts: (k) => `ns${k + 1}.dns-parking.com`, rname: 'dns.hostinger.com', serial: 'counter', timers: '10000 2400 604800 600' },
  { name: 'afraid', weight: 3, nsCount: 4, hosts: (k) => `ns${k + 1}.afraid.org`, rname: 'dnsadmin.afraid.org', serial: 'date', timers: '86400 7200 3600000 3600' },
];

/** Mail: the MX records (preference and exchange; `{d}` is the domain with dashes) and the SPF include. */
export interface MailProvider {
  readonly name: string;
  readonly weight: number;
  readonly mx: readonly string[];
  readonly spf: string;
}

export const MAIL_PROVIDERS: readonly MailProvider[] = [
  { name: 'google', weight: 300, mx: ['1 aspmx.l.google.com.', '5 alt1.aspmx.l.google.com.', '5 alt2.aspmx.l.google.com.', '10 alt3.aspmx.l.google.com.', '10 alt4.aspmx.l.google.com.'], spf: 'include:_spf.google.com' },
  { name: 'google-new', weight: 60, mx: ['1 smtp.google.com.'], spf: 'include:_spf.google.com' },
  { name: 'microsoft', weight: 260, mx: ['0 {d}.mail.protection.outlook.com.'], spf: 'include:spf.protection.outlook.com' },
  { name: 'own', weight: 220, mx: ['10 mx1.{n}', '20 mx2.{n}'], spf: 'mx a' },
  { name: 'own-single', weight: 140, mx: ['10 mail.{n}'], spf: 'mx' },
  { name: 'zoho', weight: 40, mx: ['10 mx.zoho.com.', '20 mx2.zoho.com.', '50 mx3.zoho.com.'], spf: 'include:zoho.com' },
  { name: 'ovh', weight: 30, mx: ['1 mx1.mail.ovh.net.', '5 mx2.mail.ovh.net.', '100 mx3.mail.ovh.net.'], spf: 'include:mx.ovh.com' },
  { name: 'ionos', weight: 25, mx: ['10 mx00.ionos.de.', '10 mx01.ionos.de.'], spf: 'include:_spf-eu.ionos.com' },
  { name: 'yandex', weight: 25, mx: ['10 mx.yandex.net.'], spf: 'include:_spf.yandex.net' },
  { name: 'mailru', weight: 10, mx: ['10 emx.mail.ru.'], spf: 'include:_spf.mail.ru' },
  { name: 'mimecast', weight: 20, mx: ['10 eu-smtp-inbound-1.mimecast.com.', '10 eu-smtp-inbound-2.mimecast.com.'], spf: 'include:_netblocks.mimecast.com' },
  { name: 'proofpoint', weight: 12, mx: ['10 mx0a-00{r}.pphosted.com.', '10 mx0b-00{r}.pphosted.com.'], spf: 'include:spf.protection.outlook.com include:_spf.pphosted.com' },
  { name: 'protonmail', weight: 10, mx: ['10 mail.protonmail.ch.', '20 mailsec.protonmail.ch.'], spf: 'include:_spf.protonmail.ch' },
  { name: 'namecheap', weight: 20, mx: ['10 mx1.privateemail.com.', '10 mx2.privateemail.com.'], spf: 'include:spf.privateemail.com' },
  { name: 'godaddy', weight: 30, mx: ['0 smtp.secureserver.net.', '10 mailstore1.secureserver.net.'], spf: 'include:secureserver.net' },
  { name: 'fastmail', weight: 6, mx: ['10 in1-smtp.messagingengine.com.', '20 in2-smtp.messagingengine.com.'], spf: 'include:spf.messagingengine.com' },
  { name: 'hostinger', weight: 15, mx: ['5 mx1.hostinger.com.', '10 mx2.hostinger.com.'], spf: 'include:_spf.mail.hostinger.com' },
];

/** Extra SPF includes of mailing services, added to some SPF records. */
export const SPF_EXTRAS: readonly string[] = [
  'include:sendgrid.net', 'include:servers.mcsv.net', 'include:mailgun.org', 'include:amazonses.com',
  'include:_spf.salesforce.com', 'include:spf.mandrillapp.com', 'include:mail.zendesk.com', 'include:_spf.hubspot.com',
];

/** Verification TXT prefixes and the length and alphabet of their tokens. */
export const VERIFY_TOKENS: readonly (readonly [prefix: string, length: number, alphabet: string])[] = [
  ['google-site-verification=', 43, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_'],
  ['MS=ms', 8, '0123456789'],
  ['facebook-domain-verification=', 30, 'abcdefghijklmnopqrstuvwxyz0123456789'],
  ['apple-domain-verification=', 16, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'],
  ['atlassian-domain-verification=', 64, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/'],
  ['docusign=', 36, '0123456789abcdef'],
  ['globalsign-domain-verification=', 42, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_'],
  ['stripe-verification=', 64, '0123456789abcdef'],
  ['adobe-idp-site-verification=', 64, '0123456789abcdef'],
  ['yandex-verification: ', 16, '0123456789abcdef'],
];

/**
 * CDN and SaaS targets for CNAMEs: `{h}` is a random hex-ish host token,
 * `{d}` the domain with dashes, `{l}` the subdomain label. `zone` is the
 * CDN's own zone, the bailiwick of the target's A records.
 */
export interface CnameTarget {
  readonly pattern: string;
  readonly zone: string;
  readonly weight: number;
  readonly hosting: string;
}

export const CNAME_TARGETS: readonly CnameTarget[] = [
  { pattern: 'd{h14}.cloudfront.net', zone: 'cloudfront.net', weight: 60, hosting: 'aws' },
  { pattern: '{d}.edgekey.net', zone: 'edgekey.net', weight: 25, hosting: 'akamai' },
  { pattern: '{d}.edgesuite.net', zone: 'edgesuite.net', weight: 15, hosting: 'akamai' },
  { pattern: '{d}-{l}.azureedge.net', zone: 'azureedge.net', weight: 15, hosting: 'azure' },
  { pattern: '{d}.azurewebsites.net', zone: 'azurewebsites.net', weight: 15, hosting: 'azure' },
  { pattern: '{d}-{h8}.herokuapp.com', zone: 'herokuapp.com', weight: 10, hosting: 'aws' },
  { pattern: '{d}.github.io', zone: 'github.io', weight: 12, hosting: 'github' },
  { pattern: 'shops.myshopify.com', zone: 'myshopify.com', weight: 20, hosting: 'shopify' },
  { pattern: 'ghs.googlehosted.com', zone: 'googlehosted.com', weight: 15, hosting: 'google' },
  { pattern: 'cname.vercel-dns.com', zone: 'vercel-dns.com', weight: 12, hosting: 'vercel' },
  { pattern: '{d}.netlify.app', zone: 'netlify.app', weight: 10, hosting: 'digitalocean' },
  { pattern: '{d}.global.ssl.fastly.net', zone: 'fastly.net', weight: 10, hosting: 'fastly' },
  { pattern: '{d}.cdn.cloudflare.net', zone: 'cloudflare.net', weight: 12, hosting: 'cloudflare' },
  { pattern: '{d}-{h10}.elb.amazonaws.com', zone: 'amazonaws.com', weight: 25, hosting: 'aws' },
  { pattern: '{h32}.s3-website-us-east-1.amazonaws.com', zone: 'amazonaws.com', weight: 6, hosting: 'aws' },
  { pattern: 'e{h6}.a.akamaiedge.net', zone: 'akamaiedge.net', weight: 10, hosting: 'akamai' },
  { pattern: '{d}.b-cdn.net', zone: 'b-cdn.net', weight: 6, hosting: 'ovh' },
  { pattern: 'autodiscover.outlook.com', zone: 'outlook.com', weight: 0, hosting: 'azure' },
  { pattern: 'custom.crisp.help', zone: 'crisp.help', weight: 3, hosting: 'ovh' },
  { pattern: '{d}.zendesk.com', zone: 'zendesk.com', weight: 5, hosting: 'cloudflare' },
  { pattern: 'domains.tumblr.com', zone: 'tumblr.com', weight: 3, hosting: 'aws' },
  { pattern: 'sites.wix.com', zone: 'wix.com', weight: 0, hosting: 'wix' },
  { pattern: 'ext-sq.squarespace.com', zone: 'squarespace.com', weight: 4, hosting: 'squarespace' },
  { pattern: 'hosted-by.wpengine.com', zone: 'wpengine.com', weight: 6, hosting: 'google' },
];
