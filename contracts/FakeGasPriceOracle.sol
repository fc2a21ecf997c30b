// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Stands in, on anvil, for the OP Stack's GasPriceOracle predeploy (0x420000000000000000000000000000000000000F):
/// the L1 data fee of a transaction is a configurable price per byte of its unsigned RLP encoding, plus the
/// 68 bytes a signature adds, as the real oracle counts them.
contract FakeGasPriceOracle {
    uint256 public l1FeePerByte;

    function setL1FeePerByte(uint256 fee) external {
        l1FeePerByte = fee;
    }

    function getL1Fee(bytes memory unsignedTransaction) external view returns (uint256) {
        return (unsignedTransaction.length + 68) * l1FeePerByte;
    }
}
