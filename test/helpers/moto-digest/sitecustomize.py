"""Makes moto_server's KMS Sign honour MessageType=DIGEST as AWS documents it.

The moto these machines ship (5.2.1) parses MessageType and ignores it: a DIGEST is hashed once more, so
its signature is over SHA-256(digest), which no Ethereum node accepts (getmoto/moto pull request 10202,
open). Python imports this module at startup when its folder is on PYTHONPATH (the tests start
moto_server so); it signs a DIGEST as given (cryptography's Prehashed), as AWS KMS does, and changes
nothing else. The service itself is tested against the unchanged emulator too: it refuses to start
there, saying why.
"""
import threading

from cryptography.hazmat.primitives.asymmetric import ec, utils
from moto.kms import responses
from moto.kms import utils as kms_utils

request = threading.local()
ship_sign_response = responses.KmsResponse.sign
ship_key_sign = kms_utils.ECDSAPrivateKey.sign


def sign_response(self):
    request.digest = self._get_param("MessageType") == "DIGEST"
    try:
        return ship_sign_response(self)
    finally:
        request.digest = False


def key_sign(self, message, signing_algorithm):
    if not getattr(request, "digest", False):
        return ship_key_sign(self, message, signing_algorithm)
    kms_utils.validate_signing_algorithm(signing_algorithm, self.valid_signing_algorithms)
    hash_algorithm = self._ECDSAPrivateKey__hash_algorithm(signing_algorithm)
    if len(message) != hash_algorithm.digest_size:
        raise ValueError("Digest is invalid length for algorithm " + signing_algorithm)
    return self.private_key.sign(message, ec.ECDSA(utils.Prehashed(hash_algorithm)))


responses.KmsResponse.sign = sign_response
kms_utils.ECDSAPrivateKey.sign = key_sign
