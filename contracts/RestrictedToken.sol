// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

import {ERC20} from "@openzeppelin/contracts/token/ERC20/ERC20.sol";

/// A test token shaped like Circle's USDC: 6 decimals, an owner-kept blocklist and a pause switch, both
/// of which make a transfer revert with a reason.
contract RestrictedToken is ERC20 {
    address public immutable owner;
    bool public paused;
    mapping(address => bool) public blocked;

    constructor(uint256 initialSupply) ERC20("Restricted USD", "RUSD") {
        owner = msg.sender;
        _mint(msg.sender, initialSupply);
    }

    function decimals() public pure override returns (uint8) {
        return 6;
    }

    function setPaused(bool paused_) external {
        require(msg.sender == owner, "RestrictedToken: caller is not the owner");
        paused = paused_;
    }

    function setBlocked(address account, bool blocked_) external {
        require(msg.sender == owner, "RestrictedToken: caller is not the owner");
        blocked[account] = blocked_;
    }

    function _update(address from, address to, uint256 value) internal override {
        require(!paused, "Pausable: paused");
        require(!blocked[from] && !blocked[to], "Blocklistable: account is blocked");
        super._update(from, to, value);
    }
}
