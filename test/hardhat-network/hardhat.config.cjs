// Hardhat Network as the tests' second node implementation: `hardhat node` is started from this folder
// (test/helpers/hardhat-node.ts). Automining, as Hardhat does by default: its pool then refuses a nonce
// above the next one, as L2 sequencers do.
module.exports = {
  networks: {
    hardhat: {
      chainId: 31337,
      mining: { auto: true },
    },
  },
};
