/**
 * The `fake.<module>.<method>` functions an expression may call: the methods of
 * @faker-js/faker 10.6.0 (the pinned version) that are own functions of a module of its `faker`
 * instance. Known here, without loading faker, so `validate` checks them in no time; a test checks
 * this list against the installed faker, so a version bump that changes it fails the suite.
 *
 * Left out on purpose: `helpers.fake` and `helpers.mustache` (they evaluate templates that could
 * come from the request), `helpers.maybe` and `helpers.multiple` (they take callbacks, which an
 * expression cannot make), and `image.urlLoremFlickr` (deprecated by faker, it writes a warning to
 * stderr on every call, which would flood the server's log).
 */
const METHODS: Record<string, string> = {
  datatype: 'boolean',
  date: 'month weekday timeZone anytime past future between betweens recent soon birthdate',
  helpers:
    'slugify replaceSymbols replaceCreditCardSymbols fromRegExp shuffle uniqueArray objectKey objectValue objectEntry arrayElement weightedArrayElement arrayElements enumValue rangeToNumber',
  location:
    'zipCode city buildingNumber street streetAddress postalAddress secondaryAddress county country continent countryCode state direction cardinalDirection ordinalDirection timeZone language latitude longitude nearbyGPSCoordinate',
  number: 'int float binary octal hex bigInt romanNumeral',
  string: 'fromCharacters alpha alphanumeric binary octal hexadecimal numeric sample uuid ulid nanoid symbol',
  airline: 'airport airline airplane recordLocator seat aircraftType flightNumber',
  animal: 'dog cat snake bear lion cetacean horse bird cow fish crocodilia insect rabbit rodent type petName',
  book: 'author format genre publisher series title',
  color: 'human space cssSupportedFunction cssSupportedSpace rgb cmyk hsl hwb lab lch colorByCSSColorSpace',
  commerce: 'department productName price productAdjective productMaterial product productDescription isbn upc',
  company:
    'name catchPhrase buzzPhrase catchPhraseAdjective catchPhraseDescriptor catchPhraseNoun buzzAdjective buzzVerb buzzNoun',
  database: 'column type collation engine mongodbObjectId',
  finance:
    'accountNumber accountName routingNumber amount transactionType currency currencyCode currencyName currencySymbol currencyNumericCode bitcoinAddress litecoinAddress creditCardNumber creditCardCVV creditCardIssuer pin ethereumAddress iban bic transactionDescription',
  food: 'adjective description dish ethnicCategory fruit ingredient meat spice vegetable',
  git: 'branch commitEntry commitMessage commitDate commitSha',
  hacker: 'abbreviation adjective noun verb ingverb phrase',
  image: 'avatar avatarGitHub personPortrait url urlPicsumPhotos dataUri',
  internet:
    'email exampleEmail username displayName protocol httpMethod httpStatusCode url domainName domainSuffix domainWord ip ipv4 ipv6 port userAgent mac password emoji jwtAlgorithm jwt',
  lorem: 'word words sentence slug sentences paragraph paragraphs text lines',
  music: 'album artist genre songName',
  person:
    'firstName lastName middleName fullName gender sex sexType bio prefix suffix jobTitle jobDescriptor jobArea jobType zodiacSign',
  phone: 'number imei',
  science: 'chemicalElement unit',
  system:
    'fileName commonFileName mimeType commonFileType commonFileExt fileType fileExt directoryPath filePath semver networkInterface cron',
  vehicle: 'vehicle manufacturer model type fuel vin color vrm bicycle',
  word: 'adjective adverb conjunction interjection noun preposition verb sample words',
};

/** Faker modules by name → their allowed method names. */
export const FAKER_API: ReadonlyMap<string, ReadonlySet<string>> = new Map(
  Object.entries(METHODS).map(([module, names]) => [module, new Set(names.split(' '))]),
);

/** Methods refused even though faker has them, with the reason given to the user. */
export const FAKER_REFUSED: Readonly<Record<string, string>> = {
  'helpers.fake': 'evaluates a template; write the expression instead',
  'helpers.mustache': 'evaluates a template; write the expression instead',
  'helpers.maybe': 'takes a function, which an expression cannot make',
  'helpers.multiple': 'takes a function; use `$repeat` instead',
  'image.urlLoremFlickr':
    'is deprecated by faker (removed in 11) and prints a warning on every call; use `fake.image.url()`',
};
