// With a global struct of resources in the shader, DXC gives an unannotated array of N
// resources N bindings (it flattens resources then): layers takes 0-2, the struct's fields 3
// and 4, detail 5. Not WGSL, which has no arrays of resources.
Texture2D layers[3];

struct Pair
{
    Texture2D tex;
    SamplerState samp;
};

Pair pair;
Texture2D detail;

float4 main(float2 uv : TEXCOORD0) : SV_Target
{
    return layers[1].Sample(pair.samp, uv) + pair.tex.Sample(pair.samp, uv)
        + detail.Sample(pair.samp, uv);
}
