// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A test token shaped like Tether's USDT: `transfer` returns nothing (no bool), 6 decimals, and a
/// failed transfer reverts.
contract UsdtStyleToken {
    string public name = "Tether-style USD";
    string public symbol = "USDTS";
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;

    event Transfer(address indexed from, address indexed to, uint256 value);

    constructor(uint256 initialSupply) {
        totalSupply = initialSupply;
        balanceOf[msg.sender] = initialSupply;
        emit Transfer(address(0), msg.sender, initialSupply);
    }

    function transfer(address to, uint256 value) external {
        require(balanceOf[msg.sender] >= value, "UsdtStyleToken: balance too low");
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
    }
}
