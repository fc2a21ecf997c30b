// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// Pays many recipients of one ERC-20 token in one transaction, from the caller's own balance: each item is
/// the token's transferFrom(caller, recipient, amount), so the caller must have allowed this contract to
/// spend its tokens. It has no owner, no storage and no way to receive anything: nobody can make it move
/// tokens other than their own, and it never holds any (they go from the caller straight to each recipient).
///
/// Each item succeeds or fails on its own: a transfer that reverts (a recipient on the token's blocklist) or
/// returns false is reported by an ItemFailed event with the token's revert data, and the others are paid.
/// Running out of gas is no item's fault: then the whole transaction reverts, so that no item is reported
/// failed only because its gas limit was too tight.
contract PayoutBatch {
    /// The transfer of `items[index]` of a batch `payer` sent failed; `reason` is what the token returned
    /// (its revert data, or the false it returned). `payer` tells the batch's own events from those of a
    /// call made within it (a token that calls its recipients back lets them call this contract too).
    event ItemFailed(address indexed payer, uint256 indexed index, bytes reason);

    /// `token` has no code: every transferFrom would "succeed" without moving anything.
    error NotAContract(address token);
    /// The transfer of `items[index]` ran out of gas: the batch was sent with too low a gas limit.
    error OutOfGasAt(uint256 index);

    /// Pays every item of `items`, each `amount << 160 | recipient` (the amount in the token's base units,
    /// below 2^96): one word per item instead of two keeps the calldata, paid per byte, small.
    function pay(address token, uint256[] calldata items) external {
        if (token.code.length == 0) revert NotAContract(token);
        for (uint256 i = 0; i < items.length; ) {
            uint256 item = items[i];
            uint256 gasBefore = gasleft();
            (bool called, bytes memory returned) = token.call(
                abi.encodeWithSelector(0x23b872dd, msg.sender, address(uint160(item)), item >> 160)
            );
            // A call left with at most 1/64 of the gas it started with ran out of it (EIP-150).
            if (!called && gasleft() <= gasBefore / 64) revert OutOfGasAt(i);
            // No return data is a token that returns nothing (USDT); otherwise the first word is the bool.
            if (!called || (returned.length != 0 && (returned.length < 32 || abi.decode(returned, (uint256)) == 0))) {
                emit ItemFailed(msg.sender, i, returned);
            }
            unchecked {
                ++i;
            }
        }
    }
}
