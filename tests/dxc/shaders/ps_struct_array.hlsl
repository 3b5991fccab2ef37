// An array of structs of resources: not built (DXC flattens it element by element); an error
// at the declaration.
struct Pair
{
    Texture2D tex;
    SamplerState samp;
};

Pair pairs[2]; // EXPECT-ERROR

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return pairs[1].tex.Sample(pairs[0].samp, uv);
}
