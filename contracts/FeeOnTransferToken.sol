// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// A test token that takes a fee on every transfer: the recipient gets the amount less 1 %, which goes
/// to a fee sink (two Transfer events).
contract FeeOnTransferToken is ERC20 {
    address public constant FEE_SINK = address(0xFEE);
    uint256 public constant FEE_BASIS_POINTS = 100;

    constructor(uint256 initialSupply) ERC20("Fee Token", "FEE") {
        _mint(msg.sender, initialSupply);
    }

    function _update(address from, address to, uint256 value) internal override {
        if (from == address(0) || to == address(0)) {
            super._update(from, to, value);
            return;
        }
        uint256 fee = (value * FEE_BASIS_POINTS) / 10_000;
        super._update(from, FEE_SINK, fee);
        super._update(from, to, value - fee);
    }
}
