// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A test token shaped like Tether's USDT: `transfer`, `transferFrom` and `approve` return nothing (no
/// bool), 6 decimals, and a failed transfer reverts.
contract UsdtStyleToken {
    string public name = "Tether-style USD";
    string public symbol = "USDTS";
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

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

    function approve(address spender, uint256 value) external {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
    }

    function transferFrom(address from, address to, uint256 value) external {
        require(allowance[from][msg.sender] >= value, "UsdtStyleToken: allowance too low");
        require(balanceOf[from] >= value, "UsdtStyleToken: balance too low");
        allowance[from][msg.sender] -= value;
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
