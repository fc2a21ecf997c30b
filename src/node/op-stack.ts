/** The OP Stack's GasPriceOracle predeploy, the same address on every OP Stack chain (Optimism, Base, ...). */
export const OP_GAS_PRICE_ORACLE = "0x420000000000000000000000000000000000000F";
