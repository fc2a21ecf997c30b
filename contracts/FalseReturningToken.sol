// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// A test token in the style of early ERC-20s (ZRX, BAT): a transfer that cannot be made returns false
/// instead of reverting, and moves nothing. Here that is a transfer to a refused recipient.
contract FalseReturningToken {
    string public name = "False Returning Token";
    string public symbol = "FRT";
    uint8 public constant decimals = 18;
    uint256 public totalSupply;
    address public immutable owner;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => bool) public refused;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(uint256 initialSupply) {
        owner = msg.sender;
        totalSupply = initialSupply;
        balanceOf[msg.sender] = initialSupply;
        emit Transfer(address(0), msg.sender, initialSupply);
    }

    function setRefused(address account, bool refused_) external {
        require(msg.sender == owner, "FalseReturningToken: caller is not the owner");
        refused[account] = refused_;
    }

    function transfer(address to, uint256 value) external returns (bool) {
        if (refused[to] || balanceOf[msg.sender] < value) return false;
        balanceOf[msg.sender] -= value;
        balanceOf[to] += value;
        emit Transfer(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        if (refused[to] || balanceOf[from] < value || allowance[from][msg.sender] < value) return false;
        allowance[from][msg.sender] -= value;
        balanceOf[from] -= value;
        balanceOf[to] += value;
        emit Transfer(from, to, value);
        return true;
    }
}
