// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";
import {Ownable} from "@openzeppelin/contracts/access/Ownable.sol";

/// An OpenZeppelin ERC-20 for local chains: any number of decimals, the whole supply minted to the
/// deployer, an owner-controlled freeze so tests can make transfers revert with a reason string, and one
/// recipient it always refuses, so that a demo payout can show one item failing alone.
contract DemoToken is ERC20, Ownable {
    /// The recipient every transfer to reverts (no one holds its key).
    address public constant REFUSED_RECIPIENT = 0x000000000000000000000000000000000000bEEF;

    uint8 private immutable _decimals;
    bool public frozen;

    constructor(string memory name_, string memory symbol_, uint8 decimals_, uint256 initialSupply)
        ERC20(name_, symbol_)
        Ownable(msg.sender)
    {
        _decimals = decimals_;
        _mint(msg.sender, initialSupply);
    }

    function decimals() public view override returns (uint8) {
        return _decimals;
    }

    function setFrozen(bool frozen_) external onlyOwner {
        frozen = frozen_;
    }

    function _update(address from, address to, uint256 value) internal override {
        require(!frozen, "DemoToken: transfers are frozen");
        require(to != REFUSED_RECIPIENT, "DemoToken: this recipient is refused");
        super._update(from, to, value);
    }
}
