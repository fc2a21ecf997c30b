/** solc-js ships no types; the compile script uses only compile() and version(). */
declare module "solc";
