// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Never deployed. Its creation code is run by eth_call at a block: the constructor answers, instead of
/// code to deploy, the token and native balances of every wallet there, so that a pool's balances cost
/// one call whatever the number of its lanes. The answer is abi-encoded uint256[]: token then native
/// balance of each wallet in turn.
contract WalletBalances {
    constructor(address token, address[] memory wallets) {
        uint256[] memory balances = new uint256[](wallets.length * 2);
        for (uint256 i = 0; i < wallets.length; i++) {
            (bool answered, bytes memory tokenBalance) = token.staticcall(abi.encodeWithSignature("balanceOf(address)", wallets[i]));
            require(answered && tokenBalance.length >= 32, "balanceOf failed");
            balances[2 * i] = abi.decode(tokenBalance, (uint256));
            balances[2 * i + 1] = wallets[i].balance;
        }
        bytes memory answer = abi.encode(balances);
        assembly {
            return(add(answer, 32), mload(answer))
        }
    }
}
